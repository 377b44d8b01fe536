"""Text that reaches a terminal: names from runs and traces (host folders, host.json fields,
process names) are data, and a terminal acts on some characters (ESC starts sequences that
move the cursor, retitle the window or write the clipboard; bidi overrides reorder what is
shown). printable() shows every such character as an escape instead."""


def escape_char(c):
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def printable(s, keep="\n\t"):
    """s with every character that is not printable (C0 and C1 controls, ESC, DEL, format
    characters such as bidi overrides, lone surrogates of undecodable file names) written as
    \\xNN / \\uNNNN; the characters of keep (newline, tab) stay."""
    s = str(s)
    if s.isprintable() or all(c.isprintable() or c in keep for c in s):
        return s
    return "".join(c if c.isprintable() or c in keep else escape_char(c) for c in s)


class EscapingStream:
    """A text stream whose writes go through printable() (the CLI's stderr; its stdout on a
    terminal): no message can carry a terminal sequence from a name."""

    def __init__(self, inner):
        self.inner = inner

    def write(self, s):
        return self.inner.write(printable(s))

    def __getattr__(self, name):
        return getattr(self.inner, name)
