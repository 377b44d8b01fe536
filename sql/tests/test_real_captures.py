"""Checks of the SQL views on the real two-VM captures in fixtures/ (stock 6.1 kernels):
join coverage, stage sums, per-host durations against trace-cmd's own output, and
command counts against fio's log. Needs the converter (just build; NTSCOPE_BIN)."""
import glob
import json
import os
import re
import subprocess

import pytest

from ntscope.sql import views

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SAMPLES = ["stock-randread-4k-qd8", "stock-randrw-mixed"]


@pytest.fixture(scope="module", params=SAMPLES)
def run(request, fixture_run):
    dst = fixture_run(request.param)
    return request.param, dst, views.connect(dst)


def one(con, sql):
    return con.execute(sql).fetchone()


def fio_issued(path):
    m = re.search(r"issued rwts: total=(\d+),(\d+),", open(path).read())
    return int(m.group(1)), int(m.group(2))


def test_matched_at_least_99_percent(run):
    _, _, con = run
    total, matched = one(con, "SELECT count(*), count(*) FILTER (WHERE match_state = 'matched') FROM io")
    assert total > 1000
    assert matched / total >= 0.99, (matched, total)


def test_counts_equal_fio_log(run):
    name, dst, con = run
    reads, writes = fio_issued(os.path.join(dst, "initiator", "fio.log"))
    got = dict(con.execute("SELECT io_type, count(*) FROM io GROUP BY io_type").fetchall())
    assert got.get("read", 0) == reads
    assert got.get("write", 0) == writes
    if name == "stock-randread-4k-qd8":
        assert reads == 6389


def test_stage_sums_equal_end_to_end(run):
    _, _, con = run
    bad = one(con, "SELECT count(*) FROM io_stage_check c JOIN io USING (io_id) "
                   "WHERE io.match_state = 'matched' AND NOT c.ok")[0]
    good = one(con, "SELECT count(*) FROM io_stage_check WHERE ok")[0]
    assert bad == 0
    assert good >= 0.99 * one(con, "SELECT count(*) FROM io")[0]
    # children of every stage sum to their parent
    diff = one(con, """
        SELECT count(*) FROM (
            SELECT c.io_id, c.parent, sum(c.dur) AS s, any_value(p.dur) AS pd
            FROM io_stages c JOIN io_stages p
              ON p.io_id = c.io_id AND p.stage_set = c.stage_set AND p.stage = c.parent
            WHERE c.dur IS NOT NULL GROUP BY c.io_id, c.stage_set, c.parent
            HAVING count(*) = count(c.dur) AND s <> pd)""")[0]
    assert diff == 0


def trace_cmd_events(path, names):
    """(event, ts_ns, fields) from trace-cmd's own report, for the given event names."""
    out = subprocess.run(["trace-cmd", "report", "-t", "-i", path], capture_output=True, text=True).stdout
    rx = re.compile(r"\[\d+\]\s+(\d+)\.(\d{9}):\s+(\w+):\s+(.*)$")
    for line in out.splitlines():
        m = rx.search(line)
        if m and m.group(3) in names:
            yield m.group(3), int(m.group(1)) * 10**9 + int(m.group(2)), dict(re.findall(r"(\w+)=(ARRAY\[[^\]]*\]|\S+)", m.group(4)))


def test_host_durations_equal_trace_cmd(run):
    """First 20 read commands on each host: submit->complete duration as trace-cmd prints it."""
    _, dst, con = run
    for host, sub, com in (("initiator", "nvme_setup_cmd", "nvme_complete_rq"),
                           ("target", "nvmet_req_init", "nvmet_req_complete")):
        pending, pairs = {}, []
        for ev, ts, f in trace_cmd_events(os.path.join(dst, host, "trace.dat"), {sub, com}):
            key = (f["qid"], f["cid"])
            if ev == sub and f["qid"] != "0" and f["opcode"] == "2":
                pending[key] = ts
            elif ev == com and key in pending:
                pairs.append((int(f["qid"]), int(f["cid"]), pending.pop(key), ts))
            if len(pairs) >= 20:
                break
        assert len(pairs) == 20
        for qid, cid, s, c in pairs:
            got = con.execute("SELECT submit_ts, complete_ts, dur FROM nvme_commands "
                              "WHERE host = ? AND qid = ? AND cid = ? AND submit_ts = ?",
                              [host, qid, cid, s]).fetchall()
            assert got == [(s, c, c - s)], (host, qid, cid, s, c, got)


def test_clock_offset_consistent_with_first_command(run):
    """The offset lies inside the bounds of the first matched pair, found by hand from
    trace-cmd's output: same (qid, cid, slba), target receive after host send, host
    receive after target send; and it is known to better than a millisecond."""
    _, dst, con = run
    off, unc = one(con, "SELECT offset_ns, uncertainty_ns FROM clock_offset")
    i_ev = list(trace_cmd_events(os.path.join(dst, "initiator", "trace.dat"), {"nvme_setup_cmd"}))[0]
    i_done = next(ts for ev, ts, f in trace_cmd_events(os.path.join(dst, "initiator", "trace.dat"),
                                                       {"nvme_complete_rq"}) if f["cid"] == i_ev[2]["cid"])
    t = [x for x in trace_cmd_events(os.path.join(dst, "target", "trace.dat"), {"nvmet_req_init", "nvmet_req_complete"})
         if x[2]["cid"] == i_ev[2]["cid"] and x[2]["qid"] == i_ev[2]["qid"]]
    init = next(x for x in t if x[0] == "nvmet_req_init" and x[2]["cdw10"] == i_ev[2]["cdw10"])
    done = next(x for x in t if x[0] == "nvmet_req_complete" and x[1] > init[1])
    assert done[1] - i_done - unc <= off <= init[1] - i_ev[1] + unc
    assert 0 < unc < 1_000_000


LAB = ["lab-6.1-patched-write-128k", "lab-6.1-patched-interference-c3", "lab-6.1-stock-slow-device",
       "lab-6.1-patched-kernel-stacks"]


@pytest.fixture(scope="module", params=LAB)
def lab_run(request, fixture_run):
    src = os.path.join(REPO, "fixtures", request.param)
    # A missing fixture is a broken checkout, not a reason to skip.
    assert os.path.isdir(src), f"lab fixture {request.param} not in fixtures/"
    dst = fixture_run(request.param)
    return request.param, dst, views.connect(dst)


def test_lab_fixture_join_and_stages(lab_run):
    """Lab captures (host.json present; patched ones with nvme_tcp/nvmet_tcp events):
    controller map from host.json, >= 99% matched, every reported stage set tiles
    end_to_end, no negative stage, I/O count equal to fio's JSON."""
    name, dst, con = lab_run
    assert one(con, "SELECT source FROM ctrl_map")[0] == "host.json"
    total, matched = one(con, "SELECT count(*), count(*) FILTER (WHERE match_state = 'matched') FROM io")
    assert matched / total >= 0.99
    sets = {r[0] for r in con.execute("SELECT DISTINCT stage_set FROM io_stages").fetchall()}
    # initiator_only too when the initiator recorded the target's ACKs (capture key nvme_acks, on
    # by default since; the older fixtures have none)
    assert sets - {"initiator_only"} == ({"ntprof", "s_notation", "stock"} if "patched" in name else {"stock"})
    # (initiator_only leaves an I/O whose ACK rode on its response unsplit: io_nvme_acks.not_split)
    assert one(con, "SELECT count(*) FROM io_stage_check WHERE NOT ok AND stage_set <> 'initiator_only'")[0] == 0
    assert one(con, "SELECT count(*) FROM io_stages WHERE dur < 0")[0] == 0
    fio = [f for f in os.listdir(os.path.join(dst, "initiator")) if f.startswith("fio-") and f.endswith(".json")]
    ios = 0
    for f in fio:
        for job in json.load(open(os.path.join(dst, "initiator", f)))["jobs"]:
            ios += job["read"]["total_ios"] + job["write"]["total_ios"]
    assert total == ios, (total, ios)


def test_kernel_stacks_keep_every_frame(fixture_run):
    """A capture with the kernel stack after every event (capture key stacks=1, trace-cmd -T):
    each host's ftrace:kernel_stack rows, one per other event, hold the frames their record
    holds (`size` of them: kernels >= 5.x declare caller[8] and write the stack's depth), fewer
    and more than 8 on each host; the differential test compares each frame with trace-cmd's."""
    dst = fixture_run("lab-6.1-patched-kernel-stacks")
    con = views.connect(dst)
    for host in ("initiator", "target"):
        stacks = os.path.join(dst, host, "parquet", "ftrace", "kernel_stack.parquet")
        n, short, long_, mismatched = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE len(caller) < 8), count(*) FILTER (WHERE len(caller) > 8), "
            "count(*) FILTER (WHERE len(caller) <> size) FROM read_parquet(?)", [stacks]).fetchone()
        others = sum(con.execute("SELECT count(*) FROM read_parquet(?)", [f]).fetchone()[0]
                     for f in glob.glob(os.path.join(glob.escape(os.path.join(dst, host, "parquet")), "*", "*.parquet"))
                     if f != stacks)
        assert (n, mismatched) == (others, 0), (host, n, others, mismatched)
        assert short > 0 and long_ > 0, (host, short, long_)
    con.close()


def test_io_numbers_follow_submit_order(run):
    # io.io_n (the integer key of io_milestones, io_stage_durations and the reports' joins):
    # 1..n by initiator host and submit time, each io once, on the milestones and stage rows too
    _, _, con = run
    n, lo, hi, distinct, out_of_order = one(con, """
        WITH r AS (SELECT io_n, row_number() OVER (
                       ORDER BY initiator_host, coalesce(i_setup_ts, i_complete_rq_ts), ctrl_id, qid, cid) AS want
                   FROM io)
        SELECT count(*), min(io_n), max(io_n), count(DISTINCT io_n), count(*) FILTER (WHERE io_n <> want) FROM r""")
    assert n > 1000 and (lo, hi, distinct, out_of_order) == (1, n, n, 0)
    assert one(con, "SELECT count(*) FROM io_milestones m JOIN io i USING (io_n) WHERE m.io_id <> i.io_id")[0] == 0
    assert one(con, "SELECT count(*) FROM io_stage_durations") == one(
        con, "SELECT count(*) FROM io, io_stage_definitions")


@pytest.mark.parametrize("name", SAMPLES + ["lab-6.1-patched-few-queues"])
def test_string_columns_read_alike_in_pyarrow_and_duckdb(name, fixture_run):
    # The converter writes each string column's Parquet dictionary from the decoder's own
    # (analyzer/src/dict_column.rs). Read by pyarrow (dictionary-typed, as the files' Arrow schema
    # says), every index is inside its dictionary and every value is DuckDB's, row for row.
    # few-queues: two fio jobs, so `comm` (keyed by pid) names "fio" under two keys in a batch.
    import duckdb
    import pyarrow as pa
    import pyarrow.parquet as pq
    dst = fixture_run(name)
    checked = set()
    duck = duckdb.connect()
    for host in ("initiator", "target"):
        top = os.path.join(dst, host, "parquet")
        for sub, _, files in os.walk(top):
            for f in sorted(files):
                if not f.endswith(".parquet"):
                    continue
                path = os.path.join(sub, f)
                table = pq.read_table(path)
                for name, col in zip(table.column_names, table.columns):
                    if not pa.types.is_dictionary(col.type):
                        continue
                    for chunk in col.chunks:
                        chunk.validate(full=True)
                    got = col.cast(pa.string()).to_pylist()
                    want = [r[0] for r in duck.execute(
                        f'SELECT "{name}" FROM read_parquet(?, file_row_number = true) ORDER BY file_row_number',
                        [path]).fetchall()]
                    assert got == want, (path, name)
                    if table.num_rows:
                        checked.add(f"{os.path.basename(sub)}/{name}")
    # comm on every event, and the block layer's own strings (rwbs, the disk name)
    assert {"block/rwbs", "block/comm", "nvme/disk"} <= checked, sorted(checked)


def test_converting_a_capture_again_gives_the_same_bytes(ntscope_bin, tmp_path):
    # Each file's rows come in CPU order whichever thread decoded which CPU when (the
    # initiator of stock-randrw-mixed has events on two CPUs): the Parquet files of two
    # conversions, with one thread and with two, have the same sha256; metadata.json differs
    # only in the seconds the conversion took.
    import hashlib
    trace = os.path.join(REPO, "fixtures", "stock-randrw-mixed", "initiator", "trace.dat")
    digests, metas = [], []
    for k, threads in enumerate(("1", "2", "2")):
        out = tmp_path / f"out{k}"
        r = subprocess.run([ntscope_bin, "convert", "-q", "-j", threads, trace, "-o", str(out)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        files = sorted(str(p.relative_to(out)) for p in out.rglob("*.parquet"))
        digests.append({f: hashlib.sha256((out / f).read_bytes()).hexdigest() for f in files})
        meta = json.load(open(out / "metadata.json"))
        meta["converter"].pop("seconds")
        metas.append(meta)
    assert len(digests[0]) > 20 and digests[0] == digests[1] == digests[2]
    assert metas[0] == metas[1] == metas[2]
    import pyarrow.parquet as pq
    cpus = pq.read_table(os.path.join(str(tmp_path / "out1"), "block", "block_rq_issue.parquet"))["cpu"].to_pylist()
    assert len(set(cpus)) == 2 and cpus == sorted(cpus)
