"""A failure inside DuckDB exits 2 with a one-line message that says what and the fix; with
NTSCOPE_DEBUG=1 the traceback the message offers is shown instead (it was not, for DuckDB
errors: the branch that raises came after theirs)."""
import duckdb
import pytest

from ntscope import cli


def failing_with(exc):
    def cmd(_args):
        raise exc
    return cmd


@pytest.mark.parametrize("exc,message", [
    (duckdb.OutOfMemoryException("Out of Memory Error: failed to pin block of size 256.0 KiB"),
     "DuckDB ran out of memory (Out of Memory Error: failed to pin block of size 256.0 KiB) at memory limit"),
    (duckdb.BinderException("Binder Error: Referenced column \"x\" not found"),
     "DuckDB failed (BinderException): Binder Error: Referenced column \"x\" not found"),
])
def test_duckdb_error_message_then_traceback_on_request(monkeypatch, capsys, exc, message):
    monkeypatch.setattr(cli, "cmd_convert", failing_with(exc))
    monkeypatch.delenv("NTSCOPE_DEBUG", raising=False)
    assert cli.main(["convert", "some-run"]) == 2
    err = capsys.readouterr().err
    assert message in err and "NTSCOPE_DEBUG=1" in err
    assert len(err.strip().splitlines()) == 1, err   # one line, no traceback
    monkeypatch.setenv("NTSCOPE_DEBUG", "1")
    with pytest.raises(type(exc)):
        cli.main(["convert", "some-run"])
