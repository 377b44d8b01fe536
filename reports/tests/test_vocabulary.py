"""One vocabulary on every surface (reports/README.md "Vocabulary"): every key the reports
print for a queue, a device, a stream, a stage and a group is typed back into the matching
flag of `ntscope analyze`, is accepted, and selects the I/Os the report counted for it.

The keys come from the real outputs: `ntscope analyze` (report.txt / report.json grouped by
every field, interference.txt / interference.json) and `ntscope compare` (compare.txt /
compare.json) of two fixtures with several streams, queues and CPUs. They are fed back
through the CLI's own parser and spec (ntscope.cli.parser, reports/report/command.spec_from_args) to the selection
(selection.apply) on one connection to the run's views, which counts io_selected."""
import json
import os
import re
from collections import Counter, defaultdict

import pytest

from ntscope import cli, data
from ntscope.reports.report import command as report_command
from ntscope.common.errors import NtscopeError
from ntscope.reports.report import selection

BASE, RUN = "lab-6.1-stock-interference-c0", "lab-6.1-stock-interference-c3"
# group-by fields -> the analyze flag each value is typed into (pid: --process takes pids too)
GROUP_FLAG = {"type": "--type", "size": "--size", "queue": "--queue", "device": "--device", "cpu": "--cpu",
              "pid": "--process", "host": "--host", "target": "--target", "process": "--process"}
GROUPINGS = ("type,size,queue,device,cpu,pid,host,target", "process,time")


def read(folder, name):
    with open(os.path.join(folder, name)) as f:
        return json.load(f) if name.endswith(".json") else f.read()


@pytest.fixture(scope="module")
def printed(fixture_run, ntscope_cli, tmp_path_factory):
    """What the reports of RUN print: one analyze per grouping (with an objective per stage of
    the first), and a compare of BASE and RUN."""
    run, base = fixture_run(RUN), fixture_run(BASE)
    tmp = tmp_path_factory.mktemp("vocabulary")
    out = {"run": run, "analyze": []}
    for i, group_by in enumerate(GROUPINGS):
        folder = str(tmp / f"analyze{i}")
        args = ["analyze", run, "--out", folder, "--quiet", "--no-cache", "--group-by", group_by,
                "--stage-set", "all"]
        p = ntscope_cli(*args)
        assert p.returncode == 0, p.stderr
        out["analyze"].append({n: read(folder, n) for n in ("report.json", "report.txt", "interference.json",
                                                            "interference.txt")})
    stages = sorted({(s["stage_set"], s["stage"]) for g in out["analyze"][0]["report.json"]["groups"]
                     for s in g["stages"]})
    folder = str(tmp / "slo")
    p = ntscope_cli("analyze", run, "--out", folder, "--quiet", "--no-cache", "--no-interference",
                    *[a for ss, st in stages for a in ("--slo", f"{ss}:{st} max <= 1000s")])
    assert p.returncode == 0, p.stderr
    out["slo"] = read(folder, "report.json")
    folder = str(tmp / "compare")
    p = ntscope_cli("compare", base, run, "--out", folder, "--quiet", "--no-cache")
    assert p.returncode == 0, p.stderr
    out["compare"] = {n: read(folder, n) for n in ("compare.json", "compare.txt")}
    return out


@pytest.fixture(scope="module")
def select(printed):
    """select(*flags) -> the number of I/Os `ntscope analyze RUN FLAGS` selects (NtscopeError
    when the flags are refused)."""
    con = data.connect(printed["run"])

    def count(*flags):
        a = cli.parser().parse_args(["analyze", printed["run"], *flags])
        selection.apply(con, report_command.spec_from_args(a))
        return con.execute("SELECT count(*) FROM io_selected").fetchone()[0]
    yield count
    con.close()


def group_fields(key_text):
    """'type=read, queue=initiator/c0/q1' -> [('type', 'read'), ('queue', 'initiator/c0/q1')]."""
    return [tuple(part.split("=", 1)) for part in key_text.split(", ")]


def group_flags(key_text, bucket_s):
    flags = []
    for field, value in group_fields(key_text):
        if field == "time":   # a time group: that bucket, as a window
            flags += ["--window", f"{float(value):g}:{float(value) + bucket_s:g}"]
        else:
            flags += [GROUP_FLAG[field], value]
    return flags


def groups(printed):
    for a in printed["analyze"]:
        doc = a["report.json"]
        for g in doc["groups"]:
            yield g, doc["spec"]["time_bucket_s"], a["report.txt"]


def test_every_group_printed_selects_its_ios(printed, select):
    seen = 0
    for g, bucket_s, txt in groups(printed):
        assert f"group: {g['key_text']}   count {g['count']} " in txt   # the key as report.txt prints it
        assert select(*group_flags(g["key_text"], bucket_s)) == g["count"], g["key_text"]
        seen += 1
    assert seen >= 4


def keyed(printed, field):
    """field ('queue', 'device') -> {key: I/Os} from the groups (the first grouping has both)."""
    counts = Counter()
    for g in printed["analyze"][0]["report.json"]["groups"]:
        counts[dict(group_fields(g["key_text"]))[field]] += g["count"]
    return counts


def printed_queues(printed):
    """Every queue key any output prints: report groups and timeseries, interference streams and
    its resource lines, compare's interference."""
    rep, intf = printed["analyze"][0]["report.json"], printed["analyze"][0]["interference.json"]
    keys = {t["queue"] for t in rep["timeseries"] if t["queue"] != "all"}
    for s in intf["streams"] + printed["compare"]["compare.json"]["interference"]["streams"]:
        keys |= set(s["queues"].split(","))
    return keys | set(keyed(printed, "queue"))


def test_every_queue_printed_selects_its_ios(printed, select):
    counts = keyed(printed, "queue")
    keys = printed_queues(printed)
    assert keys and all(re.fullmatch(r"initiator/c\d+/q\d+", k) for k in keys), keys
    for k in sorted(keys):
        assert k in printed["analyze"][0]["report.txt"]
        assert select("--queue", k) == counts[k], k
    assert select("--queue", ",".join(sorted(keys))) == sum(counts.values())


def test_every_device_printed_selects_its_ios(printed, select):
    counts = keyed(printed, "device")
    keys = set(counts)
    for s in printed["analyze"][0]["interference.json"]["streams"]:
        keys |= set(s["devices"].split(","))
    assert keys and all(re.fullmatch(r"initiator/nvme\d+n\d+", k) for k in keys), keys
    for k in sorted(keys):
        assert select("--device", k) == counts[k], k


def test_short_forms_select_the_same_ios_on_one_initiator(printed, select):
    for k, n in keyed(printed, "queue").items():
        qid = k.rsplit("/q", 1)[1]
        assert select("--queue", qid) == sum(c for q, c in keyed(printed, "queue").items()
                                             if q.rsplit("/q", 1)[1] == qid)
    for k, n in keyed(printed, "device").items():
        assert select("--device", k.split("/", 1)[1]) == n


def test_every_stream_printed_selects_its_ios(printed, select):
    streams = defaultdict(set)
    for s in printed["analyze"][0]["interference.json"]["streams"]:
        streams[s["stream_id"]].add(s["ios"])
    for s in printed["compare"]["compare.json"]["interference"]["streams"]:   # the run's, as compare prints them
        streams[s["stream_id"]].add(s["ios"])
    assert len(streams) >= 2
    txt = printed["analyze"][0]["interference.txt"] + printed["compare"]["compare.txt"]
    for sid, ios in sorted(streams.items()):
        assert sid in txt and len(ios) == 1, (sid, ios)
        assert select("--stream", sid) == ios.pop(), sid


def test_every_stage_printed_is_an_objectives_stage_over_its_ios(printed, select):
    """A stage (and its set) as report.json and compare.json name it goes into --slo SET:STAGE
    and --stage-set SET; the objective judges the I/Os the report measured the stage on."""
    measured = Counter()
    for g in printed["analyze"][0]["report.json"]["groups"]:
        for s in g["stages"]:
            measured[(s["stage_set"], s["stage"])] += s["count"]
    judged = {(o["stage_set"], o["stage"]): o["ios"] for o in printed["slo"]["slo"]["objectives"]}
    assert judged == measured and len(judged) >= 12
    compared = {(r["stage_set"], r["stage"]) for r in printed["compare"]["compare.json"]["lad"]}
    assert compared and compared <= set(judged)
    total = select()
    for stage_set in sorted({ss for ss, _ in judged}):
        assert select("--stage-set", stage_set) == total


def test_every_compare_group_selects_the_ios_compared(printed, select):
    lad = [r for r in printed["compare"]["compare.json"]["lad"] if r["stage"] == "end_to_end"]
    assert lad
    for r in lad:
        assert r["group_key"] in printed["compare"]["compare.txt"]
        assert select(*group_flags(r["group_key"], 1.0)) == r["n_run"], r["group_key"]


def test_two_initiators_keys_select_their_ios_and_short_forms_are_refused(fixture_run, ntscope_cli, tmp_path):
    """With several initiators every queue and device the report prints (several hosts, several
    queues) selects its group's I/Os; `--queue 1` / `--device nvme0n1` name several hosts'
    resources: refused, with the full keys to choose from."""
    run = fixture_run("lab-6.1-patched-two-initiators")
    p = ntscope_cli("analyze", run, "--out", str(tmp_path), "--quiet", "--no-cache", "--no-interference",
                    "--group-by", "host,queue,device")
    assert p.returncode == 0, p.stderr
    doc = read(str(tmp_path), "report.json")
    con = data.connect(run)
    try:
        counts = defaultdict(Counter)
        for g in doc["groups"]:
            for field, value in group_fields(g["key_text"]):
                counts[field][value] += g["count"]
        hosts = sorted(counts["host"])
        assert len(hosts) == 2 and len(counts["queue"]) >= 4, counts
        for field in ("host", "queue", "device"):
            for key, n in counts[field].items():
                spec = report_command.spec_from_args(cli.parser().parse_args(["analyze", run, GROUP_FLAG[field], key]))
                selection.apply(con, spec)
                assert con.execute("SELECT count(*) FROM io_selected").fetchone()[0] == n, key
        for flag, short in (("--queue", "1"), ("--device", "nvme0n1")):
            a = cli.parser().parse_args(["analyze", run, flag, short])
            with pytest.raises(NtscopeError, match=f"{flag} {short} is ambiguous.*{hosts[0]}/.*{hosts[1]}/"):
                selection.apply(con, report_command.spec_from_args(a))
    finally:
        con.close()
