"""recovery.txt: recovery.json as text (controller outages, failed commands by status, the
I/Os that were sent again). Formats; computes nothing."""


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
