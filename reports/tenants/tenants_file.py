"""A tenants file (TOML): which cgroups make each tenant, and each tenant's class with the
class's objectives. Rows for sql/core/tenant_rules.sql and sql/tenants/class_objectives.sql.

    [[tenant]]
    name = "web"
    cgroups = ["/kubepods/*web*", "/web"]    # globs over the cgroup path below the v2 root
    class = "gold"                           # optional

    [[class]]
    name = "gold"
    objectives = ["p99 <= 2ms", "target_device p90 < 500us", "iops >= 200", "mb_s >= 50"]

Latency objectives are --slo's grammar without a selector (reports/slo/objectives.py);
`iops >= N` and `mb_s >= N` (10^6 bytes per second) are minimum rates, judged per full second."""
import re
import tomllib

from ntscope.common import inputs
from ntscope.common.values import SpecError
from ntscope.reports.slo import objectives as slo

FIX = "see reports/tenants/README.md 'Tenants file'"
KEYS = {"tenant": {"name", "cgroups", "class"}, "class": {"name", "objectives"}}
RATE = re.compile(r"^\s*(?P<metric>iops|mb_s)\s*(?P<op>>=|>)\s*(?P<value>\d+(?:\.\d+)?)\s*$")


def read(path):
    """The file's tenants and classes, checked: ([tenant dict], {class name: [objective text]})."""
    try:
        doc = tomllib.loads(inputs.read_text(path, "tenants file", inputs.SPEC_MAX, FIX))
    except tomllib.TOMLDecodeError as e:
        raise SpecError(f"tenants file {path}: {e}; fix: {FIX}") from None
    for table in doc:
        if table not in KEYS:
            raise SpecError(f"tenants file {path}: unknown table {table!r}; fix: [[tenant]] and [[class]] entries only ({FIX})")
    tenants, classes = [], {}
    for kind in ("class", "tenant"):
        entries = doc.get(kind, [])
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            raise SpecError(f"tenants file {path}: {kind} is not a list of [[{kind}]] tables; fix: write each as "
                            f"[[{kind}]] with its keys below ({FIX})")
        for n, e in enumerate(entries, 1):
            where = f"tenants file {path}: [[{kind}]] number {n}"
            extra = set(e) - KEYS[kind]
            if extra:
                raise SpecError(f"{where} has key(s) {', '.join(sorted(extra))}; fix: keys are {', '.join(sorted(KEYS[kind]))}")
            name = e.get("name")
            if not isinstance(name, str) or not name.strip():
                raise SpecError(f"{where} has no name; fix: name = \"web\"")
            listed = e.get("cgroups" if kind == "tenant" else "objectives")
            if not (isinstance(listed, list) and listed and all(isinstance(x, str) and x for x in listed)):
                what = 'cgroups = ["/web"]' if kind == "tenant" else 'objectives = ["p99 <= 2ms"]'
                raise SpecError(f"{where} ({name}) has no list of {what.split(' =')[0]}; fix: e.g. {what}")
            if kind == "class":
                if name in classes:
                    raise SpecError(f"{where}: class {name!r} is defined twice; fix: one [[class]] per name")
                classes[name] = listed
            else:
                cls = e.get("class")
                if cls is not None and cls not in classes:
                    raise SpecError(f"{where} ({name}): class {cls!r} is not defined; fix: add [[class]] name = "
                                    f"\"{cls}\" with its objectives, or one of: {', '.join(sorted(classes)) or 'none defined'}")
                for pattern in listed:
                    if not pattern.startswith(("/", "*", "?", "[")):
                        raise SpecError(f"{where} ({name}): cgroup pattern {pattern!r} does not start at the cgroup v2 "
                                        f"root; fix: a path as host.json tenants.cgroups shows it, e.g. \"/{pattern}\"")
                tenants.append({"name": name, "cgroups": listed, "class": cls})
    return tenants, classes


def rule_rows(tenants):
    """tenant_rules' rows: one per (tenant, pattern), in the file's order."""
    rows = []
    for t in tenants:
        for p in t["cgroups"]:
            rows.append({"rule_n": len(rows) + 1, "pattern": p, "tenant": t["name"], "class": t["class"]})
    return rows


def objective_rows(classes, primary_set, stages):
    """class_objectives' rows: each class's objectives parsed (SpecError naming the class)."""
    rows = []
    for cls, texts in classes.items():
        for n, text in enumerate(texts, 1):
            row = {"class": cls, "objective_n": n, "text": text.strip(), "metric": None, "stage_set": None,
                   "stage": None, "statistic": None, "quantile": None, "limit_ns": None, "min_rate": None}
            rate = RATE.match(text)
            if rate:
                v = float(rate.group("value"))
                row.update(metric=rate.group("metric"), min_rate=v + (1e-9 if rate.group("op") == ">" else 0))
            else:
                try:
                    parsed = slo.parse(text, n, primary_set, stages)
                except SpecError as e:
                    raise SpecError(f"class {cls!r}: {e}; a rate is 'iops >= N' or 'mb_s >= N'") from None
                if parsed["io_type"] or parsed["size_lo"] is not None or parsed["comm"]:
                    raise SpecError(f"class {cls!r}: objective {text!r} has a selector; fix: a class objective covers "
                                    f"all its I/O, e.g. '{text.split(':', 1)[-1].strip()}'")
                row.update(metric="latency", stage_set=parsed["stage_set"], stage=parsed["stage"],
                           statistic=parsed["statistic"], quantile=parsed["quantile"], limit_ns=parsed["limit_ns"])
            rows.append(row)
    return rows
