"""Report spec: filters and grouping, from flags or a TOML file, turned into the
io_selected view (a WHERE clause and a group key over the io view's columns)."""
import re
import tomllib

from ntscope.errors import NtscopeError

# report field -> io column (group_json key in the report)
FIELDS = {
    "type": ("io_type", "type"),
    "size": ("size_bytes", "size_bytes"),
    "device": ("disk", "device"),
    "queue": ("qid", "queue"),
    "cpu": ("cpu", "cpu"),
    "process": ("comm", "process"),
    "pid": ("pid", "pid"),
    "host": ("initiator_host", "host"),
    "target": ("target_host", "target"),
    "time": (None, "time_s"),
}
UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20}


class SpecError(NtscopeError):
    """A filter or grouping that cannot be applied (exit 2)."""


def parse_size(text):
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in UNITS:
        raise SpecError(f"size '{text}' is not a size; fix: use bytes or k/m suffixes, e.g. 4096, 4k, 128KiB")
    return int(m.group(1)) * UNITS[m.group(2).lower()]


def size_condition(text):
    """'4k' exact, '4k-128k' range, '>=32k', '<8k', '>4k', '<=1m'."""
    t = str(text).strip()
    m = re.fullmatch(r"(>=|<=|>|<)(.+)", t)
    if m:
        return f"size_bytes {m.group(1)} {parse_size(m.group(2))}"
    if "-" in t:
        lo, hi = t.split("-", 1)
        return f"size_bytes BETWEEN {parse_size(lo)} AND {parse_size(hi)}"
    return f"size_bytes = {parse_size(t)}"


def sql_str(s):
    return "'" + str(s).replace("'", "''") + "'"


def as_list(v):
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return [str(x) for x in v]
    return [x.strip() for x in str(v).split(",") if x.strip()]


def ints(values, what):
    try:
        return [int(v) for v in values]
    except ValueError:
        raise SpecError(f"{what} '{','.join(values)}' is not a list of integers; fix: e.g. --{what} 1,2")


class Spec:
    def __init__(self, types=None, sizes=None, devices=None, queues=None, cpus=None,
                 processes=None, window=None, group_by=None, time_bucket_s=1.0, stage_sets=None, slos=None):
        self.types = as_list(types)
        self.sizes = as_list(sizes)
        self.devices = as_list(devices)
        self.queues = ints(as_list(queues), "queue")
        self.cpus = ints(as_list(cpus), "cpu")
        self.processes = as_list(processes)
        self.window = window
        self.group_by = as_list(group_by) or ["type", "size"]
        self.time_bucket_s = float(time_bucket_s)
        self.stage_sets = as_list(stage_sets)
        self.slos = [str(s) for s in (slos or [])]   # objectives, parsed by slo.py
        for g in self.group_by:
            if g not in FIELDS:
                raise SpecError(f"group-by field '{g}' is unknown; fix: one of {', '.join(FIELDS)}")
        if self.time_bucket_s <= 0:
            raise SpecError(f"time bucket {time_bucket_s} must be > 0 seconds; fix: e.g. --time-bucket 0.5")

    @classmethod
    def from_toml(cls, path, **overrides):
        try:
            with open(path, "rb") as f:
                doc = tomllib.load(f)
        except (OSError, tomllib.TOMLDecodeError) as e:
            raise SpecError(f"spec file {path}: {e}; fix: see reports/README.md 'Spec file'")
        flt = doc.get("filter", {})
        grp = doc.get("group", {})
        known = {"filter", "group", "stages", "slo"}
        for k in doc:
            if k not in known:
                raise SpecError(f"spec file {path}: unknown table [{k}]; fix: use [filter], [group], [stages], [slo]")
        args = dict(types=flt.get("type"), sizes=flt.get("size"), devices=flt.get("device"),
                    queues=flt.get("queue"), cpus=flt.get("cpu"), processes=flt.get("process"),
                    window=flt.get("window"), group_by=grp.get("by"),
                    time_bucket_s=grp.get("time_bucket_s", 1.0),
                    stage_sets=doc.get("stages", {}).get("sets"),
                    slos=doc.get("slo", {}).get("objectives"))
        args.update({k: v for k, v in overrides.items() if v})
        return cls(**args)

    def where(self):
        conds = []
        if self.types:
            conds.append("io_type IN (" + ", ".join(sql_str(t) for t in self.types) + ")")
        if self.sizes:
            conds.append("(" + " OR ".join(size_condition(s) for s in self.sizes) + ")")
        if self.devices:
            conds.append("disk IN (" + ", ".join(sql_str(d) for d in self.devices) + ")")
        if self.queues:
            conds.append("qid IN (" + ", ".join(map(str, self.queues)) + ")")
        if self.cpus:
            conds.append("cpu IN (" + ", ".join(map(str, self.cpus)) + ")")
        if self.processes:
            p = [x for x in self.processes]
            conds.append("(comm IN (" + ", ".join(sql_str(x) for x in p) + ")" +
                         "".join(f" OR pid = {int(x)}" for x in p if x.isdigit()) + ")")
        if self.window:
            m = re.fullmatch(r"\s*([\d.]*)\s*:\s*([\d.]*)\s*", str(self.window))
            if not m:
                raise SpecError(f"window '{self.window}' is not START:END seconds from the first I/O; "
                                "fix: e.g. --window 1.5:4 or --window 2:")
            lo, hi = m.groups()
            start = "(SELECT min(coalesce(i_bio_queue_ts, i_setup_ts)) FROM io)"
            if lo:
                conds.append(f"i_setup_ts >= {start} + {int(float(lo) * 1e9)}")
            if hi:
                conds.append(f"i_setup_ts < {start} + {int(float(hi) * 1e9)}")
        return " AND ".join(conds) if conds else "true"

    T0 = "(SELECT min(coalesce(i_bio_queue_ts, i_setup_ts)) FROM io)"

    def bucket_ns(self):
        return int(self.time_bucket_s * 1e9)

    def key_exprs(self):
        parts, jparts = [], []
        for g in self.group_by:
            col, jkey = FIELDS[g]
            if g == "time":
                col = f"((i_setup_ts - {self.T0}) // {self.bucket_ns()}) * {self.time_bucket_s}"
            parts.append(f"'{g}=' || coalesce(({col})::VARCHAR, '?')")
            jparts.append(f"'{jkey}', {col}")
        return " || ', ' || ".join(parts), "json_object(" + ", ".join(jparts) + ")"

    def bucket_exprs(self):
        """The time bucket's bounds (ns, initiator clock) when grouping by time, else NULL:
        report_groups divides a time group's counts by its own bucket, not the window."""
        if "time" not in self.group_by:
            return "NULL::BIGINT", "NULL::BIGINT"
        ns = self.bucket_ns()
        start = f"({self.T0} + ((i_setup_ts - {self.T0}) // {ns}) * {ns})"
        return start, f"({start} + {ns})"

    def view_sql(self):
        key, js = self.key_exprs()
        bstart, bend = self.bucket_exprs()
        return (f"CREATE OR REPLACE VIEW io_selected AS SELECT *, {key} AS group_key, {js} AS group_json, "
                f"{bstart} AS time_bucket_start_ts, {bend} AS time_bucket_end_ts "
                f"FROM io WHERE {self.where()}")

    def describe(self):
        return {"filter": {"type": self.types, "size": self.sizes, "device": self.devices,
                           "queue": self.queues, "cpu": self.cpus, "process": self.processes,
                           "window": self.window},
                "group_by": self.group_by, "time_bucket_s": self.time_bucket_s,
                "stage_sets": self.stage_sets, "slo": self.slos}
