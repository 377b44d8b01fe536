"""recovery.txt: recovery.json as text (controller outages, failed commands by status, the
I/Os that were sent again, the paths of a namespace with several). Formats; computes nothing."""


def secs(ns):
    return "-" if ns is None else f"{ns / 1e9:.3f} s"


def at(ns, origin):
    return "-" if ns is None or origin is None else f"{(ns - origin) / 1e9:.3f} s"


def render(doc):
    out = ["== errors and recovery"]
    for r in doc["recorded"]:
        if not r["asked"] or r["why_not"]:
            out.append(f"  {r['host']}: recovery works not recorded ({r['why_not']}; capture key recovery=1 records them): "
                       "outages show only as the commands' statuses")
    out += render_paths(doc)
    if not doc["outages"] and not doc["errors"]:
        out.append("  no controller outage, no failed command")
        return "\n".join(out) + "\n"
    for o in doc["outages"]:
        origin = o["last_answer_ts"]
        ctrl = "nvme?" if o["ctrl_id"] is None else f"nvme{o['ctrl_id']}"
        out.append(f"  {o['host']}/{ctrl} outage {o['outage_n']} ({o['kind']}): no answer for {secs(o['outage_ns'])}, "
                   f"{o['ios_held']:,} I/Os held ({secs(o['held_ns'])} in all)")
        out.append(f"    last answer        0.000 s (trace time {secs(o['last_answer_ts'])})")
        out.append(f"    failure detected   {at(o['detected_ts'], origin)} (an I/O timeout, a failed keep-alive or a broken connection)")
        out.append(f"    teardown           {secs(o['teardown_ns'])}, {o['cancelled']:,} commands cancelled")
        out.append(f"    reconnected        {at(o['recovered_ts'], origin)} after {o['reconnect_attempts']} attempt(s)")
        out.append(f"    first answer       {at(o['first_answer_ts'], origin)}")
    if doc["errors"]:
        out.append("  failed commands (NVMe status):")
        for e in doc["errors"]:
            out.append(f"    {e['host']}/nvme{e['ctrl_id']}: {e['commands']:,} x 0x{e['status']:03x} {e['status_text']}: "
                       f"{e['retried']:,} sent again, {e['failed']:,} failed for good")
    for r in doc["retried_ios"]:
        if r["retried"]:
            out.append(f"  {r['host']}: {r['retried']:,} of {r['ios']:,} I/Os sent more than once ({r['failed_attempts']:,} "
                       f"failed attempts), counted once each; their attempts cost {secs(r['lost_ns'])} "
                       f"(at most {secs(r['lost_max_ns'])} one I/O)")
    return "\n".join(out) + "\n"


def render_paths(doc):
    """The paths of each namespace reached over more than one (native multipath), their ANA
    states and events; nothing with one path each."""
    several = [p for p in doc["paths"] if p["paths"] > 1]
    if not several:
        return []
    out = ["  paths (native multipath; ANA state at the start -> at the end):"]
    for p in several:
        ana = "no ANA" if p["ana_state_start"] is None and p["ana_state_end"] is None else \
            f"ANA group {p['ana_grpid']} {p['ana_state_start'] or '?'} -> {p['ana_state_end'] or '?'}"
        out.append(f"    {p['disk']} via {p['path']}: {p['ios']:,} I/Os ({100 * (p['share'] or 0):.1f}%), {ana}, "
                   f"{p['ana_notices']} ANA notice(s)")
    origin = min((p["first_submit_ts"] for p in doc["paths"] if p["first_submit_ts"] is not None), default=None)
    for e in doc["path_events"]:
        out.append(f"    {at(e['ts'], origin)} {e['path']}: {e['event']} ({e['detail']})")
    return out
