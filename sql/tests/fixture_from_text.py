"""Build a run directory (<host>/parquet/<system>/<event>.parquet, as the converter
writes them) from a readable text file of events, for hand-checkable SQL tests.

Line format (whitespace separated, '#' starts a comment line):
    host event ts cpu pid comm key=value ...
The event's system is its name's prefix (nvme_setup_cmd: nvme), or given: system:event (the
capture's probes: ntscope_nvme_tcp:queue_rq).
dev=MAJOR,MINOR becomes dev_t (major << 20 | minor); slba=/nlb= become the 24-byte cdw10
of nvme_setup_cmd / nvmet_req_init; every other value is an integer if it parses as
one, else a string. Rows keep the file's order (not sorted by ts), like per-CPU data."""
import json
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq

SYSTEM_PREFIXES = ("nvmet_tcp", "nvme_tcp", "nvmet", "nvme", "block")


def system_of(event):
    if ":" in event:
        return event.split(":", 1)[0]
    for p in SYSTEM_PREFIXES:
        if event.startswith(p + "_"):
            return p
    raise ValueError(f"event '{event}': unknown system (expected a prefix among {SYSTEM_PREFIXES})")


def cdw10(slba, nlb):
    b = list(int(slba).to_bytes(8, "little")) + list((int(nlb) - 1).to_bytes(2, "little"))
    return b + [0] * (24 - len(b))


def parse(path):
    rows = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) < 6:
                raise ValueError(f"{path}:{n}: need host event ts cpu pid comm [key=value...], got '{line}'")
            host, event, ts, cpu, pid, comm = parts[:6]
            r = {"ts": int(ts), "cpu": int(cpu), "pid": int(pid), "comm": comm}
            kv = dict(p.split("=", 1) for p in parts[6:])
            if "slba" in kv:
                r["cdw10"] = cdw10(kv.pop("slba"), kv.pop("nlb"))
            for k, v in kv.items():
                if k == "dev":
                    major, minor = v.split(",")
                    v = (int(major) << 20) | int(minor)
                else:
                    try:
                        v = int(v, 0)
                    except ValueError:
                        pass
                r["field_comm" if k == "comm" else k] = v
            rows.setdefault((host, event), []).append(r)
    return rows


def column(values):
    if any(isinstance(v, list) for v in values):
        return pa.array([v if isinstance(v, list) else None for v in values], pa.list_(pa.uint8()))
    if all(v is None or isinstance(v, int) for v in values):
        return pa.array(values, pa.int64())
    return pa.array([None if v is None else str(v) for v in values], pa.string())


def write_run(text_path, run_dir):
    for (host, event), rs in parse(text_path).items():
        d = os.path.join(run_dir, host, "parquet", system_of(event))
        os.makedirs(d, exist_ok=True)
        cols = []
        for r in rs:
            cols += [k for k in r if k not in cols]
        table = pa.table({c: (pa.array([r[c] for r in rs], pa.int32()) if c in ("cpu", "pid")
                              else column([r.get(c) for r in rs])) for c in cols})
        pq.write_table(table, os.path.join(d, event.split(":")[-1] + ".parquet"))
    for host in os.listdir(run_dir):
        meta = os.path.join(run_dir, host, "parquet", "metadata.json")
        if not os.path.exists(meta):
            with open(meta, "w") as f:
                json.dump({"trace_clock": "mono", "lost_events_per_cpu": {"0": {"lost_events": 0}}}, f)
    return run_dir


if __name__ == "__main__":
    write_run(sys.argv[1], sys.argv[2])
