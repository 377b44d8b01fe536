"""Read the report views of a loaded run into one plain dict (the report.json document).
Only SELECTs of sql/ views here: no arithmetic on the data."""
import json

from ntscope import __version__
from ntscope.reports.report import selection
from ntscope.reports.slo import model as slo_model
from ntscope.sql.query_rows import rows_of as rows

STAT_COLS = ["count", "mean_ns", "p10_ns", "p50_ns", "p70_ns", "p80_ns", "p90_ns", "p95_ns",
             "p99_ns", "p999_ns", "p9999_ns", "min_ns", "max_ns", "stddev_ns"]


def build(con, spec):
    stage_sets, primary = selection.stage_sets(con, spec)   # the one decision (selection.py)
    mode = rows(con, "SELECT mode FROM analysis_mode")[0]["mode"]
    stats = [dict(r, value=json.loads(r["value"])) for r in
             rows(con, "SELECT name, severity, value, meaning FROM pipeline_stats ORDER BY seq, name")]
    clock = rows(con, "SELECT offset_ns, uncertainty_ns, drift_ppm, t0_ns, method FROM report_clock")
    clock = clock[0] if clock else {"offset_ns": None, "uncertainty_ns": None, "drift_ppm": None,
                                    "t0_ns": None, "method": "no matched command pairs"}
    clock_pairs = rows(con, "SELECT initiator_host, target_host, offset_ns, uncertainty_ns, drift_ppm, t0_ns, "
                            "method, synced, pairs_agreeing, pairs FROM clock_offset ORDER BY initiator_host, target_host")
    initiator_clocks = rows(con, "SELECT host, shift_ns, reference_host, via_target, uncertainty_ns "
                                 "FROM initiator_clock ORDER BY host")
    cpu_wait = {
        "hosts": rows(con, "SELECT * FROM cpu_wait_hosts ORDER BY host"),
        "io_work_queues": rows(con, "SELECT host, role, queue_key, cpu, cpu_share, runs, waited_runs, wait_mean_ns, "
                                    "wait_p50_ns, wait_p99_ns, wait_max_ns, run_mean_ns, busy_ns FROM io_work_queues "
                                    "ORDER BY host, queue_key, cpu"),
    }
    window = rows(con, "SELECT start_ts, end_ts, dur AS dur_ns FROM report_window")[0]
    # report_stage_stats, _histogram and _cdf of the selection (its stage sets only: sql/report/
    # selection.sql, as every selected_* relation below), each read once for every group
    # (a query per group computed the distinct durations again for each: 3 x groups passes over
    # io_stages) and from the values selection.apply kept (sql/report/selection.sql), its rows then handed
    # to their group
    stats_of, hist_of, cdf_of = ({} for _ in range(3))
    for into, query in (
            (stats_of, "SELECT group_key, stage_set, stage, parent, direction, " + ", ".join(STAT_COLS) +
             " FROM stage_stats_over('selected_stage_values') ORDER BY group_key, stage_set, seq"),
            (hist_of, "SELECT group_key, stage_set, stage, bucket, lo_ns, hi_ns, count "
                      "FROM stage_histogram_over('selected_stage_values') ORDER BY group_key, stage_set, seq, bucket"),
            (cdf_of, "SELECT group_key, stage_set, stage, list(dur_ns ORDER BY pct) AS dur_ns "
                     "FROM stage_cdf_over('selected_stage_values') "
                     "GROUP BY group_key, stage_set, stage, seq ORDER BY group_key, stage_set, seq")):
        for r in rows(con, query):
            into.setdefault(r.pop("group_key"), []).append(r)
    # the top-level stages a run cannot measure (a one-host run) and what they took together
    unmeasured_of = {}
    for r in rows(con, "SELECT group_key, stage_set, stages, label, reason, count, mean_ns, min_ns, max_ns "
                       "FROM selected_unmeasured ORDER BY group_key, stage_set"):
        unmeasured_of.setdefault(r.pop("group_key"), []).append(r)
    # the chosen percentiles (--percentiles) of every stage, per group
    pct_of = {}
    per_million = ", ".join(str(int(k)) for k in spec.per_million())
    for r in rows(con, "SELECT group_key, stage_set, stage, list({'pct': per_million / 10000, 'dur_ns': dur_ns} "
                       "ORDER BY per_million) AS percentiles "
                       f"FROM stage_percentiles_over('selected_stage_values', [{per_million}]) GROUP BY ALL"):
        pct_of[(r["group_key"], r["stage_set"], r["stage"])] = r["percentiles"]
    groups = []
    for g in rows(con, "SELECT * FROM report_groups ORDER BY time_start_ts, count DESC, group_key"):
        stages = stats_of.get(g["group_key"], [])
        groups.append({
            "key": json.loads(g["group_json"]), "key_text": g["group_key"],
            "count": g["count"], "est_count": g["est_count"], "matched": g["matched"], "bytes": g["bytes"],
            "iops": g["iops"], "mb_s": g["mb_s"],
            "stages": [{"stage": s["stage"], **{k: s[k] for k in ["stage_set", "parent", "direction"] + STAT_COLS},
                        "percentiles": pct_of.get((g["group_key"], s["stage_set"], s["stage"]), [])}
                       for s in stages],
            "unmeasured": unmeasured_of.get(g["group_key"], []),
            "histograms": hist_of.get(g["group_key"], []),
            "cdf_pct_1_to_100": cdf_of.get(g["group_key"], []),
        })
    ts = rows(con, "SELECT queue, bin, bin_start_ns, bin_ns, completions, bytes, iops, mb_s, inflight_avg "
                   "FROM report_timeseries ORDER BY queue, bin")
    defs = rows(con, "SELECT stage_set, stage, seq, parent, side, from_milestone, to_milestone, minus_from_milestone, minus_to_milestone, "
                     "direction, meaning FROM selected_stage_definitions ORDER BY stage_set, seq")
    sampling = rows(con, "SELECT sampled, sample_n, rule, consistent, scale, scale_source, meaning FROM sampling_run")[0]
    coverage = rows(con, "SELECT stage_set, stage, evidence, ios, measured, measurable, missing, reason "
                         "FROM selected_stage_coverage ORDER BY stage_set, seq")
    milestones = rows(con, "SELECT host, source, tracepoints, probes FROM host_milestones ORDER BY host")
    initiator_only_check = rows(con, "SELECT stage, stage_set, measured_as, ios, ios_total, within_share, median_abs_diff_ns, "
                                     "p90_abs_diff_ns, est_mean_ns, measured_mean_ns, mean_diff_ns FROM initiator_only_check")
    slo = slo_model.slo_document(con)
    return {
        "schema": "ntscope.report/4",
        "ntscope_version": __version__,
        "mode": mode,
        "spec": spec.describe(),
        "stage_sets": stage_sets,
        "primary_stage_set": primary,
        "pipeline_stats": stats,
        "clock": clock,
        "clock_pairs": clock_pairs,
        "initiator_clocks": initiator_clocks,
        "cpu_wait": cpu_wait,
        "window": window,
        "groups": groups,
        "timeseries": ts,
        "stage_definitions": defs,
        "slo": slo,
        "sampling": sampling,
        "milestones": milestones,
        "stage_coverage": coverage,
        "initiator_only_check": initiator_only_check,
    }
