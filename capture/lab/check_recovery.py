#!/usr/bin/env python3
"""Checks of a link-flap run (capture/scenarios/link-flap.sh) after `just analyze`: the outage
the trace shows is the one injected, and every I/O of fio's is counted once.

Usage: check_recovery.py RUN_DIR   (needs RUN_DIR/report/recovery.json)
Reads RUN_DIR/truth.json (loss, io_timeout, reconnect delay), RUN_DIR/initiator/fio-*.json and
the initiator's trace_marker lines (parquet/ftrace/print.parquet: 'ntscope-lab: link down' and
'link up', written by the scenario at the instants it changed the link). Prints one line per
check ("ok   ..." / "FAIL ..."), exits 1 if any failed."""
import glob
import json
import os
import sys

import pyarrow.parquet as pq
from run_checks import Checks

DONE, FAILED = "all recovery checks passed", "FAILED {failed} check(s)"
# the last answer before the loss: commands sent before it may still be answered (the loss is on
# the initiator's egress only); within this of the link going down
EDGE_S = 0.2
# after the link is back the driver waits its reconnect delay, then connects (TCP's own SYN
# retries can add a second under the lab's emulation)
RECONNECT_SLACK_S = 1.5


def markers(d):
    """{'down': ns, 'up': ns} from the initiator's trace_marker lines."""
    t = pq.read_table(os.path.join(d, "initiator", "parquet", "ftrace", "print.parquet")).to_pylist()
    out = {}
    for r in t:
        buf = r.get("buf") or ""
        for what in ("down", "up"):
            if f"ntscope-lab: link {what}" in buf:
                out[what] = r["ts"]
    return out


def main():
    check = Checks("check_recovery.py")
    d = check.run_dir
    truth = json.load(open(os.path.join(d, "truth.json")))
    inj = truth["injected"]
    doc = json.load(open(os.path.join(d, "report", "recovery.json")))
    fio = 0
    for f in glob.glob(os.path.join(glob.escape(d), "initiator", "fio-*.json")):
        for j in json.load(open(f))["jobs"]:
            fio += j["read"]["total_ios"] + j["write"]["total_ios"]
    (io,) = doc["retried_ios"]
    check(io["ios"] == fio, f"{io['ios']} I/Os in the analysis, fio did {fio} ({io['retried']} sent more than once, "
                            f"counted once)")
    outages = doc["outages"]
    if inj["loss_s"] == 0:
        check(not outages and not doc["errors"], f"the base: no outage ({len(outages)}), no failed command ({doc['errors']})")
        return check.exit_status(DONE, FAILED)
    m = markers(d)
    check(set(m) == {"down", "up"}, f"the link's down and up instants in the trace: {sorted(m)}")
    check(len(outages) == 1, f"one outage: {len(outages)}")
    if len(outages) != 1 or set(m) != {"down", "up"}:
        return check.exit_status(DONE, FAILED)
    o = outages[0]
    s = lambda ns: ns / 1e9
    loss = s(m["up"] - m["down"])
    check(abs(s(o["last_answer_ts"] - m["down"])) <= EDGE_S,
          f"last answer {s(o['last_answer_ts'] - m['down']):+.3f} s from the link going down (within {EDGE_S} s)")
    detect = s(o["detected_ts"] - m["down"])
    check(0 < detect <= inj["io_timeout_s"] + 0.5,
          f"failure detected {detect:.3f} s after the link went down (the I/O timeout is {inj['io_timeout_s']} s)")
    back = s(o["first_answer_ts"] - m["up"])
    check(0 <= back <= inj["reconnect_delay_s"] + RECONNECT_SLACK_S,
          f"first answer {back:.3f} s after the link came back (reconnect delay {inj['reconnect_delay_s']} s, "
          f"at most {inj['reconnect_delay_s'] + RECONNECT_SLACK_S} s)")
    check(o["reconnect_attempts"] >= 1 and o["recovered_ts"] is not None and o["recovered_ts"] > m["up"],
          f"{o['reconnect_attempts']} reconnect attempt(s), the last ending after the link came back")
    check(s(o["outage_ns"]) >= loss, f"outage {s(o['outage_ns']):.3f} s, the link was down {loss:.3f} s")
    aborted = [e for e in doc["errors"] if e["status"] == 0x371]
    check(o["cancelled"] >= 1 and aborted and all(e["retried"] == e["commands"] and e["failed"] == 0 for e in aborted),
          f"{o['cancelled']} commands cancelled by the recovery, each sent again ({doc['errors']})")
    check(o["ios_held"] >= 1 and io["retried"] >= 1, f"{o['ios_held']} I/Os held, {io['retried']} of them sent again")
    return check.exit_status(DONE, FAILED)


if __name__ == "__main__":
    sys.exit(main())
