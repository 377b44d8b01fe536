"""tenants.txt: tenants.json as text (who each I/O was for, namespaces on drives, classes and
their objectives, whose traffic shared a missed second's path). Formats; computes nothing."""


FILES_SHOWN = 20   # the files with the most I/Os; tenants.json has every one


def num(v, fmt="{:,.0f}"):
    return "-" if v is None else fmt.format(v)


def table(header, body):
    widths = [max(len(str(x)) for x in col) for col in zip(header, *body)]
    line = lambda r: "  ".join(str(x).ljust(w) if i == 0 else str(x).rjust(w) for i, (x, w) in enumerate(zip(r, widths)))
    return [line(header)] + [line(r) for r in body]


def attribution_lines(doc):
    out = []
    for a in doc["attribution"]:
        if a["ios_with_cgroup"]:
            out.append(f"  {a['host']}: {a['ios_with_cgroup']:,} of {a['ios']:,} I/Os with their cgroup "
                       f"({a['cgroups_named']} cgroups named under {a['cgroup_root'] or '?'})")
        elif not a["asked"]:
            out.append(f"  {a['host']}: cgroups not recorded (capture key tenants=1 records them)")
        else:
            out.append(f"  {a['host']}: no I/O's cgroup is known: {a['why_not'] or 'the probe recorded nothing'}")
        if a["why_not"] and a["ios_with_cgroup"]:
            out.append(f"    note: {a['why_not']}")
    return out


def tenants_text(doc):
    src = f"tenants file {doc['tenants_file']}" if doc["tenants_file"] else "no tenants file: a tenant is a top-level cgroup"
    out = [f"TENANTS ({src})"] + attribution_lines(doc)
    body = [[t["tenant"], t["class"] or "-", ",".join(t["cgroups"]) or "-", num(t["ios"]), num(t["iops"]),
             num(t["mb_s"], "{:,.2f}"), num(t["mean_us"]), num(t["p99_us"])] for t in doc["tenants"]]
    out += ["  " + l for l in table(["tenant", "class", "cgroups", "I/Os", "IOPS", "MB/s", "mean us", "p99 us"], body)]
    out.append("  (IOPS and MB/s over the run's full seconds; per second: tenant_seconds.parquet)")
    if doc["files"]:
        out += ["", "FILES"]
        body = [[f["file"], ",".join(f["tenants"]), num(f["ios"]), num(f["bytes"] / 1e6 if f["bytes"] is not None else None, "{:,.2f}"),
                 num(f["iops"]), num(f["mean_us"]), num(f["p99_us"])] for f in doc["files"][:FILES_SHOWN]]
        out += ["  " + l for l in table(["file", "tenants", "I/Os", "MB", "IOPS", "mean us", "p99 us"], body)]
        if len(doc["files"]) > FILES_SHOWN:
            out.append(f"  ... {len(doc['files']) - FILES_SHOWN} more files in tenants.json (per second: file_seconds.parquet)")
    shared = [n for n in doc["namespaces"] if n["namespaces_on_device"] > 1]
    if doc["namespaces"]:
        out += ["", "NAMESPACES ON TARGET DEVICES"]
        body = [[n["namespace"], n["target_device"], num(n["ios"]), "shared" if n in shared else ""] for n in doc["namespaces"]]
        out += ["  " + l for l in table(["namespace", "target device", "I/Os", ""], body)]
    for c in doc["classes"]:
        out += ["", f"CLASS {c['class']}"]
        for o in c["objectives"]:
            unit = " us" if o["metric"] == "latency" else (" IOPS" if o["metric"] == "iops" else " MB/s")
            if not o["seconds"]:
                out.append(f"  {o['text']}: no second to judge")
                continue
            state = "met" if not o["seconds_missed"] else f"MISSED in {o['seconds_missed']} of {o['seconds']} s"
            out.append(f"  {o['text']}: {state}; worst: second {o['worst_second']}, {num(o['worst_value'], '{:,.1f}')}{unit}")
            if o["missed_seconds"]:
                out.append(f"    missed seconds: {', '.join(str(s) for s in o['missed_seconds'][:20])}"
                           + (" ..." if len(o["missed_seconds"]) > 20 else ""))
        firsts = [b for b in c["blame"] if b["blame_rank"] == 1]
        for b in firsts[:10]:
            out.append(f"    second {b['second']}: on the shared {b['shared'].replace('_', ' ')}, {b['other']} "
                       f"moved {100 * (b['share'] or 0):.0f}% of the other bytes ({num(b['ios'])} I/Os)")
    if doc["limits"] and any(l["io_max"] or l["io_weight"] or l["io_latency"] or l["io_prio_class"] for l in doc["limits"]):
        out += ["", "CGROUP LIMITS AND WHAT EACH GOT"]
        body = [[l["cgroup"], l["class"] or "-", l["io_max"] or "-", l["io_weight"] or "-", l["io_latency"] or "-",
                 l["io_prio_class"] or "-", num(l["iops"]), num(l["mb_s"], "{:,.2f}")] for l in doc["limits"]]
        out += ["  " + l for l in table(["cgroup", "class", "io.max", "io.weight", "io.latency", "io.prio.class",
                                         "IOPS", "MB/s"], body)]
    return "\n".join(out) + "\n"
