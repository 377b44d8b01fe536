# The lab VMs' justfile: only the capture recipes (busybox sh, no bash).
set shell := ["sh", "-eu", "-c"]
set positional-arguments := true
export NTSCOPE_REPO := "/opt/ntscope"
export NTSCOPE_RUNS := env_var_or_default("NTSCOPE_RUNS", "/share")
import 'capture/capture.just'

# capture.just's lab recipes name this dependency; the image already carries its tools.
_packages +GROUPS:
	@true
