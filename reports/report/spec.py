"""Report spec: filters and grouping, from flags or a TOML file, turned into the values of the
report's selection (Spec.selection: the loader's input report_selection, which
sql/report/io_selected.sql applies to the io view: SQL selects and keys, this module checks)."""
import math
import re
import tomllib

from ntscope.common.values import SpecError, parse_size

# the grouping when none is given: sql/report/io_selected.sql's default (type_size_group_key)
DEFAULT_GROUP_BY = ("type", "size")

# the --group-by fields, each keyed by sql/core/group_key.sql (io_group_fields, io_group_texts: the io column
# it reads); a group prints the value its filter flag takes back: queue and device are the full
# keys (reports/README.md "Vocabulary")
FIELDS = ("type", "size", "device", "queue", "cpu", "process", "pid", "host", "target",
          # whom an I/O was for (sql/core/tenants.sql) and where it went
          "cgroup", "tenant", "class", "file", "namespace", "target_device",
          # the path (controller and target address: one per path of native multipath)
          "path", "time")
# the filters that keep I/Os whose io column holds one of a list of names: Spec attributes, named
# as report_selection's columns (sql/report/io_selection.sql)
NAME_FILTERS = ("cgroups", "tenants", "classes", "files", "namespaces", "target_devices", "paths")
# Bounds of what a flag may say, far beyond any real run (their products stay inside BIGINT
# nanoseconds and bytes): an I/O size, a time bucket, a window's bounds.
MIN_BUCKET_S, MAX_BUCKET_S = 1e-6, 1e6
MAX_WINDOW_S = 1e9                 # about 31 years


# --size's open bounds: 0 and 2^62 bytes (report_selection.size_ranges are inclusive)
SIZE_MAX = 2**62


def size_range(text):
    """'4k' exact, '4k-128k' range, '>=32k', '<8k', '>4k', '<=1m' -> {'lo': bytes, 'hi': bytes},
    both inclusive."""
    t = str(text).strip()
    m = re.fullmatch(r"(>=|<=|>|<)(.+)", t)
    if m:
        op, v = m.group(1), parse_size(m.group(2))
        return {">=": {"lo": v, "hi": SIZE_MAX}, ">": {"lo": v + 1, "hi": SIZE_MAX},
                "<=": {"lo": 0, "hi": v}, "<": {"lo": 0, "hi": v - 1}}[op]
    if "-" in t:
        lo, hi = t.split("-", 1)
        return {"lo": parse_size(lo), "hi": parse_size(hi)}
    v = parse_size(t)
    return {"lo": v, "hi": v}


def decimals(seconds):
    """The decimals a number of seconds is written with (0.25 -> 2, 1.0 -> 1): a time group's key
    prints its bucket's start so; None when Python writes it with an exponent (1e-06)."""
    text = repr(float(seconds))
    return None if "e" in text else len(text.split(".")[1])


def as_list(v):
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return [str(x) for x in v]
    return [x.strip() for x in str(v).split(",") if x.strip()]


QUEUE_KEY = re.compile(r".+/c\d+/q\d+")     # '<initiator host>/c<controller instance>/q<qid>'
STREAM_ID = re.compile(r".+/(\d+|\?) \S+ \d+B")  # '[<host>:]<comm>/<pid> <io_type> <size_bytes>B'


def queue_values(values):
    """--queue: queue keys (initiator/c0/q1, as the reports print them) or bare qids (1)."""
    for v in values:
        if not (QUEUE_KEY.fullmatch(v) or v.isdigit()):
            raise SpecError(f"queue '{v}' is neither a queue key nor a queue id; fix: the key the reports print, "
                            "<initiator host>/c<controller>/q<qid>, e.g. --queue initiator/c0/q1, or the qid alone "
                            "when the run has one initiator, e.g. --queue 1")
    return values


def stream_values(values):
    """--stream: interference's stream ids, '[<host>:]<comm>/<pid> <io_type> <size_bytes>B'."""
    for v in values:
        if not STREAM_ID.fullmatch(v):
            raise SpecError(f"stream '{v}' is not a stream id; fix: the id interference.txt prints, "
                            "<process>/<pid> <type> <size>B, e.g. --stream 'fio/117 read 4096B'")
    return values


def ints(values, what):
    try:
        return [int(v) for v in values]
    except ValueError:
        raise SpecError(f"{what} '{','.join(values)}' is not a list of integers; fix: e.g. --{what} 1,2")


def bucket_seconds(value):
    """--time-bucket / [group] time_bucket_s: seconds, finite, from a microsecond to 1e6 s."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise SpecError(f"time bucket {value!r} is not a number of seconds; fix: e.g. --time-bucket 0.5") from None
    if not (math.isfinite(v) and MIN_BUCKET_S <= v <= MAX_BUCKET_S):
        raise SpecError(f"time bucket {value} must be > 0: from {MIN_BUCKET_S:g} to {MAX_BUCKET_S:g} seconds; "
                        "fix: e.g. --time-bucket 0.5")
    return v


def parse_window(text):
    """'START:END' seconds from the first I/O (either side may be empty) -> (start, end), each a
    finite number of seconds from 0 to MAX_WINDOW_S or None; start < end."""
    fix = "fix: e.g. --window 1.5:4 or --window 2:"
    m = re.fullmatch(r"\s*([^:]*?)\s*:\s*([^:]*?)\s*", str(text))
    if not m:
        raise SpecError(f"window '{text}' is not START:END seconds from the first I/O; {fix}")
    bounds = []
    for part in m.groups():
        if not part:
            bounds.append(None)
            continue
        if not re.fullmatch(r"\d+(\.\d*)?|\.\d+", part):
            raise SpecError(f"window '{text}': {part!r} is not a number of seconds (digits and one point); {fix}")
        v = float(part)
        if v > MAX_WINDOW_S:
            raise SpecError(f"window '{text}': {part} s is beyond any run (at most {MAX_WINDOW_S:g} s); {fix}")
        bounds.append(v)
    lo, hi = bounds
    if lo is not None and hi is not None and lo >= hi:
        what, example = ((f"starts at {lo:g} s, after its end at {hi:g} s", f"{hi:g}:{lo:g}") if lo > hi else
                         (f"starts and ends at {lo:g} s (it holds no time)", f"{lo:g}:{lo + 1:g}"))
        raise SpecError(f"window '{text}' {what}; the format is START:END in seconds from the first I/O, START "
                        f"before END, either side may be empty; fix: e.g. --window {example}")
    return lo, hi


# What a spec file may hold: table -> key -> (kind, an example). kinds: "list" a string or a list of
# strings and integers (a string is one entry, or a comma list as the flag takes it), "names" the
# same of strings only, "text" a string, "number" a number of seconds, "texts" a string or a list of
# strings (a string is one entry: an objective holds commas), "numbers" a comma string or a list
# of numbers.
SPEC_KEYS = {
    "filter": {"type": ("list", 'type = ["read"]'), "size": ("list", 'size = ["4k", "64k-128k"]'),
               "device": ("list", 'device = ["initiator/nvme0n1"]'),
               "queue": ("list", 'queue = ["initiator/c0/q1"]'),
               "stream": ("list", 'stream = ["fio/117 read 4096B"]'),
               "host": ("list", 'host = ["initiator"]'), "target": ("list", 'target = ["target"]'),
               "cpu": ("list", "cpu = [0, 3]"), "process": ("list", 'process = ["fio"]'),
               "cgroup": ("names", 'cgroup = ["/batch"]'), "tenant": ("names", 'tenant = ["web"]'),
               "class": ("names", 'class = ["latency"]'), "file": ("names", 'file = ["/mnt/data/f1"]'),
               "namespace": ("names", 'namespace = ["nqn.2026-11.io.ntscope:lab/ns1"]'),
               "target_device": ("names", 'target_device = ["target/nullb0"]'),
               "path": ("names", 'path = ["initiator/nvme0@169.254.10.2:4420"]'),
               "window": ("text", 'window = "1.5:4"')},
    "group": {"by": ("names", 'by = ["type", "size"]'), "time_bucket_s": ("number", "time_bucket_s = 0.5")},
    "stages": {"sets": ("names", 'sets = ["ntprof"]'), "percentiles": ("numbers", "percentiles = [50, 99, 99.9]")},
    "slo": {"objectives": ("texts", "objectives = [\"read,4k: p99 <= 2ms\"]")},
}


def spec_file_values(doc, path):
    """The spec file's tables, each key's value checked against SPEC_KEYS (SpecError naming the
    table, key, what it holds and an example otherwise); a lone objective string becomes a list."""
    fix = "see reports/README.md 'Spec file'"
    out = {}
    for table, value in doc.items():
        if table not in SPEC_KEYS:
            raise SpecError(f"spec file {path}: unknown table [{table}]; fix: use [filter], [group], [stages], [slo]")
        if not isinstance(value, dict):
            raise SpecError(f"spec file {path}: {table} is {toml_kind(value)}, not a table; fix: write it as a "
                            f"[{table}] header with its keys below, e.g. [{table}] then "
                            f"{next(iter(SPEC_KEYS[table].values()))[1]}")
        known = SPEC_KEYS[table]
        out[table] = {}
        for key, v in value.items():
            if key not in known:
                raise SpecError(f"spec file {path}: [{table}] has no key {key!r}; fix: one of {', '.join(known)} "
                                f"({fix})")
            kind, example = known[key]
            scalar = (str, int) if kind == "list" else (int, float) if kind == "numbers" else (str,)   # names, texts: strings only
            ok = (isinstance(v, str) if kind == "text" else
                  isinstance(v, (int, float)) and not isinstance(v, bool) if kind == "number" else
                  kind == "numbers" and isinstance(v, str) or
                  isinstance(v, scalar) and not isinstance(v, bool) or
                  isinstance(v, list) and all(isinstance(x, scalar) and not isinstance(x, bool) for x in v))
            if not ok:
                want = {"list": "a string or a list of strings and integers", "text": "a string",
                        "names": "a string or a list of strings",
                        "number": "a number", "texts": "a string or a list of strings",
                        "numbers": "a comma string or a list of numbers"}[kind]
                raise SpecError(f"spec file {path}: [{table}] {key} is {toml_kind(v)}, not {want}; fix: e.g. {example}")
            out[table][key] = [v] if kind == "texts" and isinstance(v, str) else v
    return out


def toml_kind(v):
    """What a TOML value is, in the file's words (never its Python repr)."""
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, dict):
        return "a table"
    if isinstance(v, list):
        return "an array holding " + (", ".join(sorted({toml_kind(x) for x in v})) if v else "nothing")
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, str):
        return "a string"
    return "a date or time"


DEFAULT_PERCENTILES = "10,50,70,80,90,95,99,99.9"


def parse_percentiles(value):
    """--percentiles 50,90,99,99.9 -> the percentiles as numbers, each > 0 and <= 100 with at
    most four decimals (ranks are taken per million)."""
    texts = as_list(value if value else DEFAULT_PERCENTILES)
    fix = "fix: a comma list of percentiles above 0 and up to 100, e.g. --percentiles 50,90,99,99.9"
    out = []
    for t in texts:
        try:
            p = float(t)
        except ValueError:
            raise SpecError(f"percentile '{t}' is not a number; {fix}") from None
        if not 0 < p <= 100:
            raise SpecError(f"percentile {t} is outside (0, 100]; {fix}")
        if abs(p * 10000 - round(p * 10000)) > 1e-6:
            raise SpecError(f"percentile {t} has more than four decimals; {fix}")
        if p not in out:
            out.append(p)
    if len(out) > 20:
        raise SpecError(f"{len(out)} percentiles: at most 20; {fix}")
    return sorted(out)


class Spec:
    def __init__(self, types=None, sizes=None, devices=None, queues=None, cpus=None,
                 processes=None, streams=None, hosts=None, targets=None, window=None, group_by=None, time_bucket_s=1.0, stage_sets=None, slos=None,
                 percentiles=None, cgroups=None, tenants=None, classes=None, namespaces=None, target_devices=None,
                 files=None, paths=None):
        self.types = as_list(types)
        self.cgroups, self.tenants, self.classes = as_list(cgroups), as_list(tenants), as_list(classes)
        self.namespaces, self.target_devices = as_list(namespaces), as_list(target_devices)
        self.files = as_list(files)
        self.paths = as_list(paths)
        self.sizes = as_list(sizes)
        self.devices = as_list(devices)
        self.queues = queue_values(as_list(queues))
        self.cpus = ints(as_list(cpus), "cpu")
        self.processes = as_list(processes)
        self.streams = stream_values(as_list(streams))
        self.hosts = as_list(hosts)        # initiator host directories (group-by host prints them)
        self.targets = as_list(targets)    # target host directories (group-by target)
        # what --device / --queue / --stream name in the run (selection.apply resolves them):
        # device and queue keys, and the streams' (host, comm, pid, io_type, size_bytes)
        self.device_keys = self.queue_keys = self.stream_rows = None
        self.window = window
        self.window_s = parse_window(window) if window else None
        self.group_by = as_list(group_by) or list(DEFAULT_GROUP_BY)
        self.time_bucket_s = bucket_seconds(time_bucket_s)
        self.stage_sets = as_list(stage_sets)
        self.slos = [str(s) for s in (slos or [])]   # objectives, parsed by slo.py
        self.percentiles = parse_percentiles(percentiles)
        for g in self.group_by:
            if g not in FIELDS:
                raise SpecError(f"group-by field '{g}' is unknown; fix: one of {', '.join(FIELDS)}")

    @classmethod
    def from_toml(cls, path, **overrides):
        from ntscope.common import inputs
        fix = "see reports/README.md 'Spec file'"
        try:
            doc = tomllib.loads(inputs.read_text(path, "spec file", inputs.SPEC_MAX, fix))
        except tomllib.TOMLDecodeError as e:
            raise SpecError(f"spec file {path}: {e}; fix: {fix}") from None
        except RecursionError:
            raise SpecError(f"spec file {path} nests tables or arrays too deeply to read; fix: {fix}") from None
        checked = spec_file_values(doc, path)
        flt, grp = checked.get("filter", {}), checked.get("group", {})
        args = dict(types=flt.get("type"), sizes=flt.get("size"), devices=flt.get("device"),
                    queues=flt.get("queue"), cpus=flt.get("cpu"), processes=flt.get("process"),
                    streams=flt.get("stream"), hosts=flt.get("host"), targets=flt.get("target"), window=flt.get("window"), group_by=grp.get("by"),
                    time_bucket_s=grp.get("time_bucket_s", 1.0),
                    stage_sets=checked.get("stages", {}).get("sets"),
                    slos=checked.get("slo", {}).get("objectives"),
                    percentiles=checked.get("stages", {}).get("percentiles"),
                    cgroups=flt.get("cgroup"), tenants=flt.get("tenant"), classes=flt.get("class"),
                    namespaces=flt.get("namespace"), target_devices=flt.get("target_device"), files=flt.get("file"),
                    paths=flt.get("path"))
        args.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**args)

    def selection(self):
        """The report's selection as the values of the loader's input report_selection
        (sql/report/io_selection.sql says what each column means), None for what is not given;
        selection.apply resolves --device, --queue and --stream against the run first."""
        given = lambda values: list(values) if values else None   # noqa: E731
        processes = self.processes or []
        window_lo, window_hi = self.window_s or (None, None)
        return {"types": given(self.types), "size_ranges": given([size_range(s) for s in self.sizes]),
                "device_keys": given(self.devices and self.resolved("device_keys")),
                "queue_keys": given(self.queues and self.resolved("queue_keys")),
                "hosts": given(self.hosts), "targets": given(self.targets),
                "streams": given([dict(zip(("host", "comm", "pid", "io_type", "size_bytes"), r))
                                  for r in (self.streams and self.resolved("stream_rows"))]),
                "cpus": given(self.cpus),
                "comms": given(processes), "pids": given([int(p) for p in processes if p.isdigit()]) if processes else None,
                **{attr: given(getattr(self, attr)) for attr in NAME_FILTERS},
                "window_lo_ns": None if window_lo is None else int(window_lo * 1e9),
                "window_hi_ns": None if window_hi is None else int(window_hi * 1e9),
                "group_by": None if self.group_by == list(DEFAULT_GROUP_BY) else list(self.group_by),
                "bucket_ns": self.bucket_ns(), "bucket_decimals": decimals(self.time_bucket_s)}

    def resolved(self, attr):
        value = getattr(self, attr)
        if value is None:
            raise RuntimeError(f"Spec.{attr} is set by selection.apply, which resolves the filters against the run")
        return value

    def bucket_ns(self):
        return int(self.time_bucket_s * 1e9)

    def describe(self):
        return {"filter": {"type": self.types, "size": self.sizes,
                           "device": self.device_keys if self.device_keys is not None else self.devices,
                           "queue": self.queue_keys if self.queue_keys is not None else self.queues,
                           "cpu": self.cpus, "process": self.processes, "stream": self.streams,
                           "host": self.hosts, "target": self.targets,
                           "cgroup": self.cgroups, "tenant": self.tenants, "class": self.classes,
                           "namespace": self.namespaces, "target_device": self.target_devices, "file": self.files,
                           "path": self.paths,
                           "window": self.window},
                "group_by": self.group_by, "time_bucket_s": self.time_bucket_s,
                "stage_sets": self.stage_sets, "slo": self.slos, "percentiles": self.percentiles}

    def per_million(self):
        """The percentiles as integers per million (stage_percentiles_over)."""
        return [round(p * 10000) for p in self.percentiles]
