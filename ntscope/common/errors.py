"""Errors users can act on, and the exit-code contract of every ntscope command."""

EXIT_OK = 0
EXIT_DATA_LOSS = 1   # only under --strict: events were lost or commands unmatched
EXIT_FATAL = 2       # bad input or environment; nothing was written under a final name


class NtscopeError(Exception):
    """Bad input or environment. The message says what failed, where, the value, and
    the fix; the command prints it to stderr and exits EXIT_FATAL."""
