"""Per-I/O data on disk (report/io.parquet, report/io_stages.parquet) and ntscope.data: written
by analyze as part of the report set, one row per I/O / per I/O and stage, and a report figure
reproduced from them with polars."""
import json
import os
import shutil

import polars as pl
import pyarrow.parquet as pq
import pytest

from ntscope import data
from ntscope.common.errors import NtscopeError

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
IO_COLUMNS = ["io_id", "initiator_host", "target_host", "queue_key", "device_key", "target_device_key",
              "io_type", "size_bytes", "disk", "slba", "group_key", "cpu", "pid", "comm", "qid", "cid", "cntlid",
              "match_state", "status", "offset_ns", "cgroup", "tenant", "class", "file", "namespace", "path",
              "ana_grpid", "ana_state", "attempts"]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, ntscope_cli):
    """fio random reads and writes of 64 sizes (4k-128k) on two queues, stock kernels."""
    run = str(tmp_path_factory.mktemp("export") / "run")
    for host in ("initiator", "target"):
        shutil.copytree(os.path.join(REPO, "fixtures", "stock-randrw-mixed", host), os.path.join(run, host))
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 0, r.stderr
    return run


def report(run, out="report"):
    return json.load(open(os.path.join(run, out, "report.json")))


def test_io_parquet_one_row_per_reported_io(mixed):
    doc = report(mixed)
    io = data.io(mixed).collect()
    stats = {s["name"]: s["value"] for s in doc["pipeline_stats"]}
    assert io.height == sum(g["count"] for g in doc["groups"]) == stats["initiator_commands"]
    assert io["io_id"].n_unique() == io.height
    assert io.columns[:len(IO_COLUMNS)] == IO_COLUMNS
    milestones = io.columns[len(IO_COLUMNS):]
    assert milestones[0] == "i:block_bio_queue" and milestones[-1] == "i:block_rq_complete"
    assert {"i:nvme_setup_cmd", "t:nvmet_req_init", "t:nvmet_req_complete", "i:nvme_complete_rq"} <= set(milestones)
    assert dict(io.schema)["i:nvme_setup_cmd"] == pl.Int64 and dict(io.schema)["size_bytes"] == pl.Int64
    assert set(io["queue_key"]) == {"initiator/c0/q1", "initiator/c0/q2"}
    assert set(io["device_key"]) == {"initiator/nvme0n1"}
    matched = io.filter(pl.col("match_state") == "matched")
    assert matched.height == stats["matched_commands"] and set(matched["target_device_key"]) == {"target/nullb0"}
    # the disk and start LBA of each I/O: the initiator's block layer issued the same sectors
    # (512-byte LBAs on this namespace: slba == sector), one request per I/O
    assert set(io["disk"]) == {"nvme0n1"}
    issued = data.events(mixed, "block", "block_rq_issue").filter(pl.col("host") == "initiator").collect()
    assert sorted(io["slba"].to_list()) == sorted(issued["sector"].to_list())
    assert io["slba"].n_unique() > io.height // 2
    # group keys are the report's
    assert dict(io.group_by("group_key").len().iter_rows()) == {g["key_text"]: g["count"] for g in doc["groups"]}
    # zstd, as documented
    meta = pq.ParquetFile(os.path.join(mixed, "report", "io.parquet")).metadata
    assert meta.row_group(0).column(0).compression == "ZSTD"


def test_io_stages_match_the_milestones(mixed):
    st = data.stages(mixed).collect()
    io = data.io(mixed).collect()
    assert st.columns == ["io_id", "stage_set", "stage", "seq", "parent", "direction", "dur", "missing"]
    assert set(st["stage_set"]) == {"stock"}
    assert st.height == io.height * 12                        # 12 stock stages per I/O
    assert set(st["direction"]) == {"submission", "completion", "both"}
    # end_to_end is measured between two milestones of io.parquet; target_exec too (target clock)
    j = st.filter(pl.col("stage").is_in(["end_to_end", "target_exec"])).pivot(
        "stage", index="io_id", values="dur").join(io, on="io_id")
    assert (j["end_to_end"] == j["i:block_rq_complete"] - j["i:block_bio_queue"]).all()
    m = j.filter(pl.col("target_exec").is_not_null())
    assert m.height > 0 and (m["target_exec"] == m["t:nvmet_req_complete"] - m["t:nvmet_req_init"]).all()


def nearest_rank(q):
    """The report's percentile (DuckDB quantile_disc): the sorted value at ceil(q * n) - 1."""
    return pl.col("dur").sort().get((pl.len() * q).ceil().cast(pl.Int64) - 1)


def test_polars_reproduces_the_report(mixed):
    doc = report(mixed)
    # the README's lines: mean and p50 of end_to_end per group
    e2e = data.stages(mixed).filter(pl.col("stage_set") == "stock", pl.col("stage") == "end_to_end")
    got = (e2e.join(data.io(mixed), on="io_id").group_by("group_key")
           .agg(n=pl.len(), mean_ns=pl.col("dur").mean(), p50_ns=nearest_rank(0.5), p99_ns=nearest_rank(0.99))
           .collect())
    got = {r["group_key"]: r for r in got.iter_rows(named=True)}
    assert len(got) == len(doc["groups"]) > 10
    for g in doc["groups"]:
        [s] = [s for s in g["stages"] if s["stage_set"] == "stock" and s["stage"] == "end_to_end"]
        r = got[g["key_text"]]
        assert r["n"] == s["count"] == g["count"]
        assert abs(r["mean_ns"] - s["mean_ns"]) <= 0.5       # the report rounds the mean to ns
        assert (r["p50_ns"], r["p99_ns"]) == (s["p50_ns"], s["p99_ns"])


def test_io_stages_rows_are_sorted(mixed):
    # by io (initiator, submit time), then stage_set, seq: each io's rows together, as written
    st = pl.read_parquet(os.path.join(mixed, "report", "io_stages.parquet"))
    io = data.io(mixed).collect()
    ios = st["io_id"].unique(maintain_order=True)
    runs = st.select((pl.col("io_id") != pl.col("io_id").shift()).fill_null(True).sum()).item()
    assert runs == ios.len()   # each io's rows in one run
    submit = dict(zip(io["io_id"], io["i:nvme_setup_cmd"]))
    order = [submit[i] for i in ios]
    assert order == sorted(order) and len(set(order)) > 100
    within = st.with_columns(pl.int_range(pl.len()).alias("row"))
    assert within.sort("io_id", "stage_set", "seq")["row"].to_list() == within.sort("io_id", "row")["row"].to_list()


@pytest.mark.parametrize("types", [None, ["write"]])
def test_io_stages_in_parts_equal_one_sort(mixed, tmp_path, ntscope_bin, monkeypatch, types):
    """io_stages.parquet sorted a part of ios at a time and put together by `ntscope
    parquet-concat` holds the rows of one sorted statement, in the same order (read by DuckDB with
    each row's position, and by pyarrow), and keeps each part's row groups; with a filter too
    (io_n then has gaps)."""
    from ntscope.reports.report import export, selection, spec as specmod
    from ntscope.sql import views
    monkeypatch.setenv("NTSCOPE_BIN", ntscope_bin)
    con = views.connect(mixed, interference=False)
    selection.apply(con, specmod.Spec(types=types))
    parts = export.stage_parts(con, "'stock'", 5_000)
    assert len(parts) >= 4 and parts[0][0] is None and parts[-1][1] is None
    one, cut = str(tmp_path / "one.parquet"), str(tmp_path / "parts.parquet")
    export.write_stages(con, one, ["stock"], part_rows=10**12)
    export.write_stages(con, cut, ["stock"], part_rows=5_000)
    assert pq.ParquetFile(cut).metadata.num_row_groups >= len(parts)
    a, b = pq.read_table(one), pq.read_table(cut)
    assert a.num_rows > 5_000 * 3 and a.equals(b)
    positions = "SELECT * FROM read_parquet(?, file_row_number=true)"
    differ = con.execute(f"SELECT count(*) FROM (({positions} EXCEPT ALL {positions}) UNION ALL "
                         f"({positions} EXCEPT ALL {positions}))", [one, cut, cut, one]).fetchone()[0]
    assert differ == 0
    spill = con.execute("SELECT current_setting('temp_directory')").fetchone()[0]
    assert not [f for f in os.listdir(spill) if f.startswith("ntscope-stages-")], "the parts' folder is removed"


def test_filters_apply_to_the_files(mixed, ntscope_cli):
    r = ntscope_cli("analyze", mixed, "--quiet", "--no-interference", "--type", "write", "--out",
                    os.path.join(mixed, "writes"))
    assert r.returncode == 0, r.stderr
    io = pl.read_parquet(os.path.join(mixed, "writes", "io.parquet"))
    st = pl.read_parquet(os.path.join(mixed, "writes", "io_stages.parquet"))
    assert set(io["io_type"]) == {"write"} and io.height == sum(g["count"] for g in report(mixed, "writes")["groups"])
    assert set(st["io_id"]) == set(io["io_id"])


def test_connect_gives_every_view_of_the_run(mixed):
    """ntscope.data.connect: one call, a DuckDB connection with the views `ntscope sql` has; a
    query through it gives the numbers report.json (and report.txt) print, and the run is only
    read (no file added or changed)."""
    before = {os.path.join(d, f): os.stat(os.path.join(d, f)).st_mtime_ns for d, _, fs in os.walk(mixed) for f in fs}
    con = data.connect(mixed)
    rows = con.execute("SELECT g.group_key, g.count, g.iops, s.mean_ns, s.p99_ns FROM report_groups g "
                       "JOIN report_stage_stats s USING (group_key) "
                       "WHERE s.stage_set = 'stock' AND s.stage = 'end_to_end'").fetchall()
    got = {k: (n, iops, mean, p99) for k, n, iops, mean, p99 in rows}
    doc = report(mixed)
    assert len(got) == len(doc["groups"]) > 10
    for g in doc["groups"]:
        [s] = [s for s in g["stages"] if s["stage_set"] == "stock" and s["stage"] == "end_to_end"]
        assert got[g["key_text"]] == (g["count"], pytest.approx(g["iops"]), pytest.approx(s["mean_ns"], abs=0.5), s["p99_ns"])
    text = open(os.path.join(mixed, "report", "report.txt")).read()
    biggest = max(doc["groups"], key=lambda g: g["count"])
    assert f"{biggest['count']}" in text and biggest["key_text"] in text
    # the interference and CPU-wait views are there too
    assert con.execute("SELECT count(*) FROM intf_streams").fetchall()[0][0] >= 1
    con.execute("SELECT * FROM cpu_wait_hosts").fetchall()
    con.close()
    after = {os.path.join(d, f): os.stat(os.path.join(d, f)).st_mtime_ns for d, _, fs in os.walk(mixed) for f in fs}
    assert after == before


def test_connect_needs_a_converted_run(tmp_path):
    run = tmp_path / "not-converted"
    (run / "initiator").mkdir(parents=True)
    with pytest.raises(NtscopeError, match="fix:"):
        data.connect(str(run))


def test_events(mixed):
    ev = data.events(mixed, "block", "block_rq_complete").collect()
    assert ev.columns[0] == "host" and set(ev["host"]) == {"initiator", "target"}
    for host in ("initiator", "target"):
        f = os.path.join(mixed, host, "parquet", "block", "block_rq_complete.parquet")
        assert ev.filter(pl.col("host") == host).height == pq.ParquetFile(f).metadata.num_rows


def test_errors_say_what_and_the_fix(tmp_path, mixed):
    run = tmp_path / "fresh"
    (run / "initiator").mkdir(parents=True)
    with pytest.raises(NtscopeError, match=r"io\.parquet does not exist; fix: run `ntscope analyze"):
        data.io(str(run))
    with pytest.raises(NtscopeError, match="no host of .* has nvme/nvme_nothing.parquet"):
        data.events(mixed, "nvme", "nvme_nothing")
    with pytest.raises(NtscopeError, match="is not a trace system name"):
        data.events(mixed, "../nvme", "x")


def test_nvme_tcp_columns_are_the_milestones_first_and_last(fresh_run, ntscope_cli):
    """A patched run (128 KiB writes: several data PDUs and sends per command): io.parquet has a
    column for each NVMe/TCP milestone some I/O has, holding exactly io_milestones' times (the
    first event's under the milestone's name, the last one's under '<name>#last'; the SQL diff
    cases pin io_milestones to hand-checked rows), and the last is never before the first."""
    from ntscope.sql import views
    run = fresh_run("lab-6.1-patched-write-128k")
    r = ntscope_cli("analyze", run, "--quiet", "--no-interference")
    assert r.returncode == 0, r.stderr
    io = data.io(run).collect()
    con = views.connect(run)
    stock = {m for (m,) in con.execute("SELECT milestone FROM stock_milestone_names").fetchall()}
    tcp = [c for c in io.columns[len(IO_COLUMNS):] if c not in stock]
    want = con.execute("SELECT io_id, milestone, ts FROM io_milestones WHERE ts IS NOT NULL").fetchall()
    want = {(i, m, t) for i, m, t in want if m not in stock}
    assert {m for _, m, _ in want} == set(tcp) and len(tcp) > 20
    long = io.select(["io_id"] + tcp).unpivot(index="io_id", variable_name="milestone", value_name="ts")
    assert set(long.drop_nulls("ts").iter_rows()) == want
    lasts = [c for c in tcp if c.endswith("#last")]
    assert all(io.filter(pl.col(c) < pl.col(c[:-len("#last")])).height == 0 for c in lasts)
    # several data PDUs per write: for these the first and the last differ on (nearly) every I/O
    later = {c: io.filter(pl.col(c) > pl.col(c[:-len("#last")])).height for c in lasts}
    assert later["t:nvmet_tcp_done_recv_pdu#last"] > io.height // 2, later
