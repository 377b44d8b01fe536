"""Service-level objectives: `--slo 'read,4k: p99 <= 2ms'` parsed into rows of the
slo_objectives table (sql/slo/slo.sql judges them). Grammar:

    [SELECTOR:] [STAGE] STATISTIC <= LIMIT
    SELECTOR   comma list of: an I/O type (read, write, flush, discard, write_zeroes),
               a size (4k) or size range (4k-128k), process=NAME
    STAGE      a stage of the primary set, or SET:STAGE (default end_to_end)
    STATISTIC  mean, max, or a percentile pNN (p50, p99, p99.9, p99.99)
    LIMIT      a duration with its unit: ns, us, ms or s (e.g. 2ms, 500us)"""
import re

from ntscope.common.values import SpecError, parse_size, shown

TYPES = ("read", "write", "flush", "discard", "write_zeroes", "other")
UNITS_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}
FORM = re.compile(r"^\s*(?:(?P<sel>[^:<]*):)?\s*(?:(?P<stage>[A-Za-z_][\w()+\-:]*?)\s+)?"
                  r"(?P<stat>mean|avg|max|p\d+(?:\.\d+)?)\s*(?P<op><=|<)\s*(?P<limit>\d+(?:\.\d+)?)\s*(?P<unit>ns|us|ms|s)\s*$")
# the same with any unit, or none: what a bound without a known unit looks like (its own message)
BARE_LIMIT = re.compile(FORM.pattern.replace(r"(?P<unit>ns|us|ms|s)", r"(?P<unit>[A-Za-z]*)"))
# the same without a selector: 'ntprof:nvme_tcp_submission p99 <= 2ms' is SET:STAGE, not a
# selector 'ntprof' (parse tries it when the selector FORM found is a stage set's name)
NO_SELECTOR = re.compile(FORM.pattern.replace(r"(?:(?P<sel>[^:<]*):)?", r"(?P<sel>)", 1))
MAX_LIMIT_NS = 10**6 * UNITS_NS["s"]   # a bound beyond a million seconds says nothing (and leaves BIGINT)
FIX = "fix: e.g. --slo 'read,4k: p99 <= 2ms' or --slo 'write: target_device p90 < 500us'"


def percentile_of(stat):
    """'p99' -> 99, 'p99.9' -> 99.9, 'p999' -> 99.9, 'p9999' -> 99.99, 'p50' -> 50."""
    digits = stat[1:]
    if "." not in digits and len(digits) > 2 and digits.startswith("99"):
        digits = digits[:2] + "." + digits[2:]
    return float(digits)


def parse(text, slo_id, primary_set, stages):
    """One objective -> a slo_objectives row (dict). stages: {(set, stage)} known."""
    m = FORM.match(text)
    if m and (m.group("sel") or "").strip() in {ss for ss, _ in stages}:
        m = NO_SELECTOR.match(text) or m
    if not m:
        bare = BARE_LIMIT.match(text)
        if bare:
            raise SpecError(unit_message(text, bare))
        raise SpecError(f"objective {text!r} is not '[SELECTOR:] [STAGE] STATISTIC <= LIMIT'; {FIX}")
    row = {"slo_id": slo_id, "text": text.strip(), "io_type": None, "size_lo": None, "size_hi": None,
           "comm": None, "stage_set": primary_set, "stage": "end_to_end"}
    for tok in filter(None, (t.strip() for t in (m.group("sel") or "").split(","))):
        if tok in TYPES:
            row["io_type"] = tok
        elif tok.startswith(("process=", "comm=")):
            row["comm"] = tok.split("=", 1)[1]
        else:
            lo, _, hi = tok.partition("-")
            row["size_lo"], row["size_hi"] = parse_size(lo), parse_size(hi or lo)
    if m.group("stage"):
        st_set, _, st = m.group("stage").rpartition(":")
        row["stage_set"], row["stage"] = (st_set or primary_set), st
    if (row["stage_set"], row["stage"]) not in stages:
        known = ", ".join(sorted(s for ss, s in stages if ss == row["stage_set"]))
        raise SpecError(f"objective {text!r}: no stage {row['stage']!r} in stage set {row['stage_set']!r}; "
                        f"fix: one of {known}")
    stat = "mean" if m.group("stat") == "avg" else m.group("stat")
    row["statistic"] = stat
    # p999 is the 99.9th percentile, p9999 the 99.99th (as fio and most latency tools write
    # them): digits after "p99" are decimals
    row["quantile"] = None if stat in ("mean", "max") else percentile_of(stat) / 100
    if row["quantile"] is not None and not 0 < row["quantile"] < 1:
        raise SpecError(f"objective {text!r}: percentile {stat} is not between p0 and p100; {FIX}")
    limit = float(m.group("limit")) * UNITS_NS[m.group("unit")]
    if limit > MAX_LIMIT_NS:
        raise SpecError(f"objective {shown(text)!r}: the bound {shown(m.group('limit') + m.group('unit'))} is beyond any I/O's "
                        f"latency (at most {MAX_LIMIT_NS // UNITS_NS['s']:,} s); {FIX}")
    # '< X' on integer ns is '<= X - 1'
    row["limit_ns"] = int(limit) - (1 if m.group("op") == "<" and limit == int(limit) else 0)
    return row


def unit_message(text, m):
    """The message for an objective whose bound has no unit, or one that is not a duration's."""
    value, unit = m.group("limit"), m.group("unit")
    head = text[:m.start("limit")].rstrip()
    ms, us = f"{head} {value}ms", f"{head} {float(value) * 1000:g}us"
    what = "has no unit" if not unit else f"has the unit {unit!r}, which is not one of ns, us, ms, s"
    return (f"objective {text!r}: the bound {value}{unit} {what} (a latency bound needs one); "
            f"fix: e.g. --slo '{ms.strip()}' or --slo '{us.strip()}'")


def load(con, texts):
    """Parses the objectives and loads the SLO views (sql/slo/) with them as slo_objectives'
    rows (the loader's input); returns how many."""
    from ntscope.sql import views
    rows = []
    if texts:
        primary = con.execute("SELECT stage_set FROM primary_stage_set").fetchone()[0]
        stages = set(con.execute("SELECT stage_set, stage FROM io_stage_definitions").fetchall())
        rows = [parse(t, i + 1, primary, stages) for i, t in enumerate(texts)]
    views.load_modules(con, ["slo/slo"], {"slo_objectives": rows})
    return len(rows)
