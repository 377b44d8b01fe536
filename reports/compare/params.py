"""The compare flags that give cmp_params (sql/compare/params.sql, an input of the loader): each value parsed
and bounded here, with a message that says what, the value, the bounds and the fix; the views
read them from cmp_params like the defaults written there."""
import math
import re

from ntscope.common.errors import NtscopeError

# flag -> cmp_params column; only these columns are ever set (their names go into SQL text)
COLUMNS = {"resamples": "resamples", "seed": "seed", "confidence": "confidence",
           "min_rel_change": "min_rel_change", "min_abs_change": "min_abs_change_ns", "group_by": "group_by"}
MIN_RESAMPLES, MAX_RESAMPLES = 50, 100_000   # below 50 an interval's ends are a handful of draws
MIN_TAIL_RESAMPLES = 5       # an interval's end is a quantile of the resamples: at least 5 beyond it
MIN_CONFIDENCE, MAX_CONFIDENCE = 0.5, 0.999
MAX_REL_CHANGE = 10.0        # 1000%: a floor above that hides every change
MAX_ABS_CHANGE_NS = 10**15   # about 11 days
MAX_SEED = 2**31 - 1
UNITS_NS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def fraction(text, flag, example):
    """'0.95' or '95%' -> 0.95."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*", str(text))
    if not m:
        raise NtscopeError(f"--{flag} {text!r} is not a fraction or a percentage; fix: e.g. --{flag} {example}")
    v = float(m.group(1))
    return v / 100 if m.group(2) else v


def resamples(text):
    if not re.fullmatch(r"\s*\d+\s*", str(text)) or not MIN_RESAMPLES <= int(text) <= MAX_RESAMPLES:
        raise NtscopeError(f"--resamples {text!r} is not a whole number from {MIN_RESAMPLES} to {MAX_RESAMPLES:,} "
                           "(bootstrap resamples per run, group and stage; time and memory grow with it); "
                           "fix: e.g. --resamples 1000")
    return int(text)


def seed(text):
    if not re.fullmatch(r"\s*\d+\s*", str(text)) or int(text) > MAX_SEED:
        raise NtscopeError(f"--seed {text!r} is not a whole number from 0 to {MAX_SEED}; fix: e.g. --seed 7")
    return int(text)


def confidence(text):
    v = fraction(text, "confidence", "0.99 or 99%")
    if not MIN_CONFIDENCE <= v <= MAX_CONFIDENCE:
        hint = f" (as a fraction: {v / 100:g}?)" if 1 < v <= 100 * MAX_CONFIDENCE else ""
        raise NtscopeError(f"--confidence {text!r} is {v:g}{hint}, outside {MIN_CONFIDENCE:g}..{MAX_CONFIDENCE:g} "
                           "(the level of every interval of the comparison); fix: e.g. --confidence 0.99 or 99%")
    return v


def min_rel_change(text):
    v = fraction(text, "min-rel-change", "0.05 or 5%")
    if v > MAX_REL_CHANGE:
        raise NtscopeError(f"--min-rel-change {text!r} is {v:g}, above {MAX_REL_CHANGE:g} (a change of more than "
                           f"{100 * MAX_REL_CHANGE:g}% of the base); fix: e.g. --min-rel-change 0.05 or 5%")
    return v


def min_abs_change_ns(text):
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*", str(text))
    if not m or m.group(2) not in UNITS_NS:
        unit = f" (its unit {m.group(2)!r} is not one of ns, us, ms, s)" if m and m.group(2) else \
            " (it needs a unit: ns, us, ms or s)" if m else ""
        raise NtscopeError(f"--min-abs-change {text!r} is not a duration{unit}; fix: e.g. --min-abs-change 50us "
                           "or 0.05ms")
    v = float(m.group(1)) * UNITS_NS[m.group(2)]
    if v > MAX_ABS_CHANGE_NS:
        raise NtscopeError(f"--min-abs-change {text!r} is beyond any I/O's latency (at most "
                           f"{MAX_ABS_CHANGE_NS // UNITS_NS['s']:,} s); fix: e.g. --min-abs-change 50us")
    return round(v)


# the --group-by fields compare's input keeps per I/O (sql/compare_sides.py IO_QUERY;
# sql/compare/input.sql cmp_io_group): analyze's others would add a string per I/O to both sides
COMPARE_GROUP_FIELDS = ("type", "size", "cpu", "process", "pid", "tenant", "class", "path", "cgroup", "file",
                        "namespace", "target_device")


def group_by(text):
    """'path' or 'type,tenant' -> ['path'] / ['type', 'tenant']: analyze's --group-by fields
    (reports/report/spec.py FIELDS) that compare's input keeps (COMPARE_GROUP_FIELDS)."""
    from ntscope.reports.report import spec
    fields = [f.strip() for f in str(text).split(",") if f.strip()]
    usable = ", ".join(COMPARE_GROUP_FIELDS)
    for f in fields:
        if f == "time":
            raise NtscopeError("--group-by time cannot compare two runs (a time bucket is of one run's clock); "
                               f"fix: one or more of {usable}")
        if f in spec.FIELDS and f not in COMPARE_GROUP_FIELDS:
            raise NtscopeError(f"--group-by {f} is analyze's, not compare's (compare keeps per I/O its {usable}); "
                               f"fix: one or more of those, or compare the runs' reports (just analyze RUN --group-by {f})")
        if f not in spec.FIELDS:
            raise NtscopeError(f"--group-by field {f!r} is unknown; fix: one or more of {usable}")
    if not fields or len(set(fields)) != len(fields):
        raise NtscopeError(f"--group-by {text!r} names no field or one twice; fix: e.g. --group-by path or type,queue")
    return fields


PARSERS = {"resamples": resamples, "seed": seed, "confidence": confidence, "min_rel_change": min_rel_change,
           "min_abs_change": min_abs_change_ns, "group_by": group_by}


def from_flags(values):
    """{flag name (dest): text or None} -> {cmp_params column: value} for the flags given,
    checked together: each tail of an interval needs MIN_TAIL_RESAMPLES resamples beyond it."""
    out = {COLUMNS[k]: PARSERS[k](v) for k, v in values.items() if v is not None}
    n, level = out.get("resamples", 200), out.get("confidence", 0.95)
    tail = n * (1 - level) / 2
    if tail < MIN_TAIL_RESAMPLES - 1e-9:
        need = math.ceil(MIN_TAIL_RESAMPLES * 2 / (1 - level) - 1e-6)
        raise NtscopeError(f"a {100 * level:g}% interval from {n} resamples has {tail:g} resamples beyond each end "
                           f"(at least {MIN_TAIL_RESAMPLES} make an end more than the most extreme draw); fix: "
                           f"--resamples {need} or more, or a lower --confidence")
    return out
