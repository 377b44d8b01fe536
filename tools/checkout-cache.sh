#!/usr/bin/env bash
# Prints this checkout's own cache folder: $NTSCOPE_CACHE/checkouts/<folder>-<hash of its path>.
# Each checkout keeps its venv and cargo target there, so two checkouts on one machine never
# import or run each other's code (the justfile and ntscope/common/converter.py compute the same path).
set -euo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cache=${NTSCOPE_CACHE:-$HOME/.cache/ntscope}
printf '%s/checkouts/%s-%s\n' "$cache" "$(basename "$repo")" "$(printf %s "$repo" | sha256sum | cut -c1-12)"
