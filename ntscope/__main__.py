import sys

try:
    from .cli import main
    import ntscope.sql  # noqa: F401 - the commands import it (and duckdb) late: check both before any work
    import duckdb  # noqa: F401
except ModuleNotFoundError as e:   # a Python without ntscope installed (e.g. python3 -m ntscope in the clone)
    print(f"ntscope: error: {sys.executable} cannot load ntscope ({e}): it is not installed in this Python; "
          "fix: run `bash setup.sh` in the clone, then `ntscope COMMAND` (setup puts it on PATH beside `just`)",
          file=sys.stderr)
    sys.exit(2)

sys.exit(main())
