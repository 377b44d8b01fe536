"""The compare input kept in each run (sql/compare_side_cache.py): a second compare of
the same runs reads it instead of building the runs' views, and says the same thing to the
byte; a changed input file, another ntscope, a damaged or unwritable cache each make compare
build the side again. Real lab fixtures (base and slow device, patched 6.1)."""
import json
import os
import subprocess
import sys

import duckdb
import pytest

from ntscope.reports.compare import model
from ntscope.sql import compare_side_cache as side_cache, compare_sides as load
from ntscope.sql import quoting, views

BASE, RUN = "lab-6.1-patched-base-randread", "lab-6.1-patched-cmp-slow-device"


def cli_compare(base, run, out, *flags):
    r = subprocess.run([sys.executable, "-m", "ntscope", "compare", base, run, "--out", out, "--quiet",
                        "--no-progress", *flags], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    files = {}
    for name in ("compare.txt", "compare.json", "compare.html"):
        with open(os.path.join(out, name), "rb") as f:
            files[name] = f.read()
    return files, r.stderr


@pytest.fixture
def pair(fixture_run):
    return fixture_run(BASE, fresh=True), fixture_run(RUN, fresh=True)


def no_views(*a, **kw):
    raise AssertionError("the side was built from the run's views, not read from its kept compare input")


def test_second_compare_reads_the_kept_sides_and_says_the_same(pair, tmp_path, monkeypatch):
    base, run = pair
    plain, _ = cli_compare(base, run, str(tmp_path / "plain"), "--no-cache")
    assert not os.path.exists(os.path.join(base, ".ntscope")) and not os.path.exists(os.path.join(run, ".ntscope"))
    first, _ = cli_compare(base, run, str(tmp_path / "first"))
    second, _ = cli_compare(base, run, str(tmp_path / "second"))
    assert first == plain and second == plain
    kept_base, kept_run = side_cache.load(base, str(tmp_path)), side_cache.load(run, str(tmp_path))
    assert kept_base is not None and kept_run is not None
    assert kept_base.first_run is None                       # built as the base: no run-side documents
    assert kept_run.first_run["interference"]["streams"] and kept_run.first_run["plots"]["streams"]
    # in process, with the views unreachable: the kept input alone makes the same document
    monkeypatch.setattr(views, "connect", no_views)
    m, plots = model.compare_documents(base, run, plots=True, cache=True)
    assert json.loads(plain["compare.json"]) == json.loads(json.dumps(m, default=str))
    assert plots is not None


def test_a_changed_input_file_builds_the_side_again(pair, tmp_path):
    base, run = pair
    cli_compare(base, run, str(tmp_path / "a"))
    key_before = side_cache.key(run)
    assert side_cache.load(run, str(tmp_path)) is not None
    (parquet,) = [os.path.join(r, f) for r, _, fs in os.walk(os.path.join(run, "target", "parquet"))
                  for f in fs if f == "nvmet_req_complete.parquet"] or [None]
    assert parquet, "the fixture has no nvmet_req_complete.parquet"
    st = os.stat(parquet)
    os.utime(parquet, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert side_cache.key(run) != key_before and side_cache.load(run, str(tmp_path)) is None
    assert side_cache.load(base, str(tmp_path)) is not None                  # the other side is untouched
    # files the views do not read (the report, dot files) leave the key alone
    changed = side_cache.key(run)
    os.makedirs(os.path.join(run, "report"), exist_ok=True)
    for p in (os.path.join(run, "report", "notes.txt"), os.path.join(run, ".notes")):
        with open(p, "w") as f:
            f.write("x")
    assert side_cache.key(run) == changed
    with open(os.path.join(run, "target", "notes.txt"), "w") as f:   # but any file of a host counts
        f.write("x")
    assert side_cache.key(run) != changed
    cli_compare(base, run, str(tmp_path / "b"))
    assert side_cache.load(run, str(tmp_path)) is not None and side_cache.key(run) != key_before


def test_new_code_or_a_damaged_cache_builds_the_side_again(pair, tmp_path, monkeypatch):
    base, run = pair
    reference, _ = cli_compare(base, run, str(tmp_path / "a"))
    monkeypatch.setattr(side_cache, "code_digest", lambda: "another ntscope")
    assert side_cache.load(base, str(tmp_path)) is None
    monkeypatch.undo()
    with open(os.path.join(side_cache.folder(run), "side.json"), "w") as f:
        f.write("{not json")
    assert side_cache.load(run, str(tmp_path)) is None
    os.unlink(os.path.join(side_cache.folder(base), "stages.parquet"))
    assert side_cache.load(base, str(tmp_path)) is None
    again, _ = cli_compare(base, run, str(tmp_path / "b"))
    assert again == reference
    assert side_cache.load(run, str(tmp_path)) is not None and side_cache.load(base, str(tmp_path)) is not None


def test_a_damaged_kept_parquet_file_is_built_again_with_a_note(pair, tmp_path):
    base, run = pair
    reference, _ = cli_compare(base, run, str(tmp_path / "a"))
    stages = os.path.join(side_cache.folder(run), "stages.parquet")
    size = os.path.getsize(stages)
    with open(stages, "r+b") as f:   # the key still matches: only the file's bytes are wrong
        f.truncate(size // 2)
    again, err = cli_compare(base, run, str(tmp_path / "b"))
    assert "is damaged; building it again" in err and again == reference
    assert kept_rows(run) > 0 and side_cache.load(run, str(tmp_path)) is not None   # kept whole again


def test_a_kept_file_without_its_stage_names_is_built_again_with_a_note(pair, tmp_path):
    # the rows name stages by def_no; the names live in the file's metadata. The same rows
    # rewritten without it (what a foreign tool or an older ntscope would leave) cannot be read
    base, run = pair
    reference, _ = cli_compare(base, run, str(tmp_path / "a"))
    stages = os.path.join(side_cache.folder(run), "stages.parquet")
    con = duckdb.connect()
    assert con.execute("SELECT count(*) FROM parquet_kv_metadata(?) WHERE decode(key) = ?",
                       [stages, load.STAGE_NAMES_KEY]).fetchall() == [(1,)]
    bare = str(tmp_path / "bare.parquet")
    con.execute(f"COPY (FROM read_parquet({quoting.sql_str(stages)})) TO {quoting.sql_str(bare)} (FORMAT parquet)")
    os.replace(bare, stages)
    again, err = cli_compare(base, run, str(tmp_path / "b"))
    assert "is damaged; building it again" in err and again == reference
    assert con.execute("SELECT count(*) FROM parquet_kv_metadata(?) WHERE decode(key) = ?",
                       [stages, load.STAGE_NAMES_KEY]).fetchall() == [(1,)]   # kept whole again


def test_hosts_behind_symbolic_links_count_and_a_dangling_link_does_not_stop_it(pair, tmp_path):
    import shutil
    base, run = pair
    moved = str(tmp_path / "target-elsewhere")
    shutil.move(os.path.join(run, "target"), moved)
    os.symlink(moved, os.path.join(run, "target"))
    os.symlink(str(tmp_path / "nowhere"), os.path.join(run, "target", "dangling.dat"))
    reference, _ = cli_compare(base, run, str(tmp_path / "a"))
    assert side_cache.load(run, str(tmp_path)) is not None
    host_json = os.path.join(moved, "host.json")
    st = os.stat(host_json)
    os.utime(host_json, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))   # behind the link
    assert side_cache.load(run, str(tmp_path)) is None


def test_a_base_kept_without_run_documents_is_built_again_as_the_run(pair, tmp_path):
    base, run = pair
    cli_compare(base, run, str(tmp_path / "a"))
    assert side_cache.load(base, str(tmp_path)).first_run is None
    swapped, _ = cli_compare(run, base, str(tmp_path / "b"))
    plain, _ = cli_compare(run, base, str(tmp_path / "c"), "--no-cache")
    assert swapped == plain and side_cache.load(base, str(tmp_path)).first_run is not None


def test_a_run_folder_that_cannot_keep_it_is_compared_anyway(pair, tmp_path):
    base, run = pair
    with open(os.path.join(run, ".ntscope"), "w") as f:      # a file where the cache folder goes
        f.write("not a folder")
    files, err = cli_compare(base, run, str(tmp_path / "a"))
    assert "compare did not keep its input for" in err and run in err
    plain, _ = cli_compare(base, run, str(tmp_path / "b"), "--no-cache")
    assert files == plain and side_cache.load(run, str(tmp_path)) is None and side_cache.load(base, str(tmp_path)) is not None


def kept_rows(run):
    import duckdb
    path = os.path.join(side_cache.folder(run), "stages.parquet")
    return duckdb.sql("SELECT count(*) FROM read_parquet(?)", params=[path]).fetchall()[0][0]


def reported_ios(run):
    with open(os.path.join(run, "report", "report.json")) as f:
        return sum(g["count"] for g in json.load(f)["groups"])


def analyze(run, *flags):
    a = subprocess.run([sys.executable, "-m", "ntscope", "analyze", run, "--quiet", "--no-progress", *flags],
                       capture_output=True, text=True)
    assert a.returncode == 0, a.stderr
    return a


def test_analyze_keeps_the_side_a_later_compare_reads(pair, tmp_path, monkeypatch):
    base, run = pair
    analyze(run)
    all_ios, all_rows = reported_ios(run), kept_rows(run)
    for r in (base, run):
        analyze(r, "--window", "0:0.5")   # a filter: the kept side is still every I/O
        assert side_cache.load(r, str(tmp_path)) is not None
        assert side_cache.load(r, str(tmp_path)).first_run["plots"]["streams"]
    assert 0 < reported_ios(run) < all_ios and kept_rows(run) == all_rows
    plain, _ = cli_compare(base, run, str(tmp_path / "plain"), "--no-cache")
    monkeypatch.setattr(views, "connect", no_views)
    m, _ = model.compare_documents(base, run, plots=True, cache=True)
    assert json.loads(plain["compare.json"]) == json.loads(json.dumps(m, default=str))
    monkeypatch.undo()
    kept, _ = cli_compare(base, run, str(tmp_path / "kept"))
    assert kept == plain


def test_analyze_without_interference_or_with_no_cache_keeps_nothing(fixture_run):
    run = fixture_run(RUN, fresh=True)
    for flag in ("--no-interference", "--no-cache"):
        analyze(run, flag)
        assert not os.path.exists(os.path.join(run, ".ntscope")), flag
