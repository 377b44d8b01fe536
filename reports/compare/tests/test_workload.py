"""Compare says when the two sides ran different workloads (sql/compare/workload.sql), and a
cause sentence never contradicts its verdict's direction (cmp_verdict): on real captures, a
4 KiB randread at qd 8 against a mixed randrw, and a pair of the same workload."""
from ntscope.reports.compare import model, render_text

RANDREAD, MIXED = "stock-randread-4k-qd8", "stock-randrw-mixed"


def test_a_mixed_read_write_run_against_a_randread_base_is_marked(fixture_run):
    m = model.compare_model(fixture_run(RANDREAD), fixture_run(MIXED), cache=True)
    diffs = {d["aspect"]: d for d in m["workload_differences"]}
    assert set(diffs) == {"io types", "io sizes"}
    assert diffs["io types"]["base"] == "read 100%" and diffs["io types"]["run"] == "write 51%, read 49%"
    assert round(diffs["io types"]["moved"], 2) == 0.51
    assert diffs["io sizes"]["base"] == "4096 100%" and diffs["io sizes"]["run"].endswith(" more")
    text = render_text.compare_text(m)
    assert text.count("WORKLOAD DIFFERS: ") == 2
    assert "WORKLOAD DIFFERS: io types: base read 100%; run write 51%, read 49% (51% of the I/Os changed kind)" in text
    faster = [v for v in m["verdicts"] if v["verdict"] == "faster"]
    assert faster, "the mixed run's 4 KiB reads are faster than the base's: the case the sentence must get right"
    for v in faster:
        assert v["cause"].startswith(f"the run is faster in {v['detail_stage'] or v['bottleneck_stage']}: "
                                     "the base was the slower side there (what slowed the base: "), v["cause"]


def test_the_same_workload_is_not_marked_and_a_slower_cause_reads_as_before(fixture_run):
    m = model.compare_model(fixture_run("lab-6.1-stock-base-randread"), fixture_run("lab-6.1-stock-slow-device"), cache=True)
    assert m["workload_differences"] == []
    assert "WORKLOAD DIFFERS" not in render_text.compare_text(m)
    (v,) = m["verdicts"]
    assert v["verdict"] == "slower" and v["cause_id"] == "slow_device"
    assert v["cause"].startswith("target device (the backing SSD / block device is slower)")
