"""Timeline export in the Chrome JSON trace format (the Perfetto UI and chrome://tracing
open it): one process per host queue track, each I/O an async slice with its stages
nested inside. Rows come from the timeline_slices view."""
import json


def stage_set_of(doc):
    """The stage set the timeline draws: the report's primary set (view primary_stage_set)."""
    return doc["primary_stage_set"] or "stock"


def write(con, path, stage_set="stock"):
    """The I/Os of the timeline_ios view (the first 10000 selected, by submit time)."""
    cur = con.execute("SELECT io_id, stage, parent, track, ts, dur, io_type, size_bytes, cid "
                      "FROM timeline_slices WHERE stage_set = ? "
                      "ORDER BY track, ts, parent NULLS FIRST", [stage_set])
    tracks, events, ids = {}, [], {}
    for io_id, stage, parent, track, ts, dur, io_type, size, cid in cur.fetchall():
        pid = tracks.setdefault(track, len(tracks) + 1)
        aid = ids.setdefault(io_id, len(ids) + 1)
        args = {"io": io_id, "type": io_type, "size_bytes": size, "cid": cid, "parent": parent}
        # async begin/end pairs with the io's id: stages of one io nest on one async track
        events.append({"ph": "b", "cat": io_type or "io", "name": stage, "id": aid, "pid": pid, "tid": pid,
                       "ts": ts / 1000.0, "args": args})
        events.append({"ph": "e", "cat": io_type or "io", "name": stage, "id": aid, "pid": pid, "tid": pid,
                       "ts": (ts + max(dur, 0)) / 1000.0})
    for track, pid in tracks.items():
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": pid, "args": {"name": track}})
    with open(path, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns",
                   "otherData": {"source": "ntscope", "stage_set": stage_set,
                                 "clock": "initiator trace clock; target stages shifted by the clock offset"}}, f)
    return len(tracks), len(ids)
