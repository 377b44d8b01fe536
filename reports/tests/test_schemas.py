"""The JSON Schemas of the documents ntscope writes (reports/schemas/) and reads
(capture/schemas/), held to real documents: every fixture's host.json and truth.json, and the
report.json, interference.json, compare.json and sweep.json of a representative set of fixture
runs (stock, patched, several hosts, sampled, --slo, a compare with repeats, a compare with no
verdict, a sweep). A document with a key the schema does not know, or a value of another type,
fails: the schemas are the contract, and a new field goes into them with its description. The
version every output names (ntscope_version) is ntscope's, in the Python package, the Rust
converter and the standalone capture script alike."""
import copy
import glob
import json
import os
import re
import subprocess
import sys
import tomllib

import pyarrow.parquet as pq
import pytest

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema is installed with ntscope[test]")
referencing = pytest.importorskip("referencing")

import ntscope  # noqa: E402
from ntscope.reports import registry  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(REPO, "fixtures")
# each declared analysis' schema (reports/registry.py), and the capture's
SCHEMA_FILES = {
    **{a.name: os.path.relpath(a.schema_path(), REPO) for a in registry.analyses() if a.schema},
    "host": "capture/schemas/host.schema.json",
    "truth": "capture/schemas/truth.schema.json",
}


OUR_DOCUMENTS = {a.name for a in registry.analyses() if a.schema}


def load(path):
    with open(path) as f:
        return json.load(f)


SCHEMAS = {k: load(os.path.join(REPO, p)) for k, p in SCHEMA_FILES.items()}
# compare.json holds the run's interference document: its schema refers to interference's by $id
REGISTRY = referencing.Registry().with_resources(
    (s["$id"], referencing.Resource.from_contents(s)) for s in SCHEMAS.values())


def errors(kind, doc):
    """Every violation of the schema of kind by doc, as 'path: message' lines."""
    v = jsonschema.Draft202012Validator(SCHEMAS[kind], registry=REGISTRY)
    return [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}"[:300] for e in v.iter_errors(doc)]


def assert_valid(kind, doc, where):
    bad = errors(kind, doc)
    assert not bad, f"{where} does not follow {SCHEMA_FILES[kind]}:\n" + "\n".join(bad[:20])


# ---------------------------------------------------------------- the schemas themselves
@pytest.mark.parametrize("kind", sorted(SCHEMA_FILES))
def test_each_schema_is_a_valid_draft_2020_12_schema(kind):
    s = SCHEMAS[kind]
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(s)


def walk(node, path=""):
    if isinstance(node, dict):
        yield path, node
        for k, v in node.items():
            yield from walk(v, f"{path}/{k}")
    elif isinstance(node, list):
        for k, v in enumerate(node):
            yield from walk(v, f"{path}/{k}")


@pytest.mark.parametrize("kind", sorted(SCHEMA_FILES))
def test_every_key_is_described_and_numbers_name_their_unit_or_meaning(kind):
    for path, node in walk(SCHEMAS[kind]):
        for key, sub in (node.get("properties") or {}).items():
            assert "description" in sub or "$ref" in sub, f"{kind}: {path}/properties/{key} has no description"
    # our outputs: strict objects (a new field must be added here, with its meaning)
    if kind in OUR_DOCUMENTS:
        for path, node in walk(SCHEMAS[kind]):
            if node.get("type") == "object" and "properties" in node:
                assert node.get("additionalProperties") is False, f"{kind}: {path} is open to undocumented keys"


def test_the_cause_vocabulary_is_the_stage_tables_cause_ids():
    """truth.json's cause and compare.json's cause_id take the ids of sql/core/stage_definitions.sql
    cause_ids: one vocabulary."""
    import duckdb
    con = duckdb.connect()
    with open(os.path.join(REPO, "sql", "core/stage_definitions.sql")) as f:
        con.execute(f.read())
    ids = {r[0] for r in con.execute("SELECT cause_id FROM cause_ids").fetchall()}
    assert "none" in ids
    assert set(SCHEMAS["truth"]["$defs"]["cause_id"]["enum"]) == ids
    assert set(SCHEMAS["compare"]["$defs"]["cause_id"]["enum"]) == ids


# ---------------------------------------------------------------- inputs: host.json, truth.json
HOST_FILES = sorted(glob.glob(os.path.join(FIXTURES, "*", "*", "host.json")))
TRUTH_FILES = sorted(glob.glob(os.path.join(FIXTURES, "*", "truth.json")))


def test_fixtures_have_host_and_truth_files():
    assert len(HOST_FILES) >= 70 and len(TRUTH_FILES) >= 35


@pytest.mark.parametrize("path", HOST_FILES, ids=lambda p: os.path.relpath(p, FIXTURES))
def test_every_fixture_host_json_follows_the_schema(path):
    assert_valid("host", load(path), path)


@pytest.mark.parametrize("path", TRUTH_FILES, ids=lambda p: os.path.relpath(p, FIXTURES))
def test_every_fixture_truth_json_follows_the_schema(path):
    assert_valid("truth", load(path), path)


def test_inputs_take_new_keys_but_not_wrong_types():
    host = load(os.path.join(FIXTURES, "lab-6.1-patched-digest", "initiator", "host.json"))
    truth = load(os.path.join(FIXTURES, "lab-6.1-patched-digest", "truth.json"))
    assert not errors("host", dict(host, a_key_of_a_newer_capture={"x": 1}))
    assert not errors("truth", dict(truth, a_key_of_a_newer_lab=[1]))
    assert errors("host", dict(host, ncpu="2"))                          # a number as text
    assert errors("host", dict(host, role="server"))                     # not a role
    assert errors("host", {k: v for k, v in host.items() if k != "role"})
    assert errors("truth", dict(truth, cause="slow_disk"))               # not a cause_id
    broken = copy.deepcopy(host)
    broken["nvme_controllers"][0]["cntlid"] = "1"
    assert errors("host", broken)


def test_the_capture_script_writes_host_json_with_the_ntscope_version(tmp_path):
    """The capture script is standalone sh: it carries its own version, which is ntscope's; the
    lab's truth.json takes it from there."""
    script = os.path.join(REPO, "capture", "ntscope-capture")
    out = subprocess.run([script, "version"], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["ntscope-capture", ntscope.__version__]
    with open(script) as f:
        text = f.read()
    assert re.search(r'"ntscope_version":%s,.*"\$\(js "\$ntscope_version"\)"', text), \
        "host.json's printf no longer writes ntscope_version"
    with open(os.path.join(REPO, "capture", "lab", "lab.sh")) as f:
        assert 't["ntscope_version"] = "$ntscope_version"' in f.read()


def test_the_converter_crate_has_the_ntscope_version():
    with open(os.path.join(REPO, "analyzer", "Cargo.toml"), "rb") as f:
        assert tomllib.load(f)["package"]["version"] == ntscope.__version__


# ---------------------------------------------------------------- outputs
@pytest.fixture(scope="module")
def analyzed(fixture_run, ntscope_cli):
    done = {}

    def get(name, *flags):
        if name not in done:
            run = fixture_run(name)
            r = ntscope_cli("analyze", run, "--quiet", *flags)
            assert r.returncode == 0, r.stderr
            done[name] = run
        return done[name]
    return get


def report_doc(run, name):
    return load(os.path.join(run, "report", name))


# stock (with --slo), patched, two initiators, a sampled capture
RUNS = [("stock-randread-4k-qd8", ("--slo", "read,4k: p99 <= 20ms", "--slo", "read: target_device p90 < 5us")),
        ("lab-6.1-patched-write-128k", ()),
        ("lab-6.1-patched-two-initiators", ()),
        ("lab-6.1-patched-capture-sampled", ())]


@pytest.mark.parametrize("name, flags", RUNS, ids=[r[0] for r in RUNS])
def test_report_and_interference_json_follow_their_schemas(analyzed, name, flags):
    run = analyzed(name, *flags)
    doc = report_doc(run, "report.json")
    assert_valid("report", doc, f"{name}/report.json")
    assert doc["ntscope_version"] == ntscope.__version__
    assert_valid("interference", report_doc(run, "interference.json"), f"{name}/interference.json")
    assert report_doc(run, "interference.json")["ntscope_version"] == ntscope.__version__
    if flags:
        assert doc["slo"]["objectives"] and doc["slo"]["worst_ios"], "the --slo lists are empty: nothing checked"
    if name.endswith("sampled"):
        assert doc["sampling"]["sampled"] is True


def test_a_new_key_or_a_wrong_type_in_an_output_fails(analyzed):
    doc = report_doc(analyzed(RUNS[0][0], *RUNS[0][1]), "report.json")
    assert not errors("report", doc)
    for mutate in (lambda d: d.update(undocumented=1),
                   lambda d: d["groups"][0].update(p42_ns=1),
                   lambda d: d["groups"][0]["stages"][0].update(mean_ns="4.7 ms"),
                   lambda d: d["pipeline_stats"][0].update(severity="fatal"),
                   lambda d: d["window"].pop("dur_ns"),
                   lambda d: d.update(schema="ntscope.report/2")):
        bad = copy.deepcopy(doc)
        mutate(bad)
        assert errors("report", bad), "a mutant report.json passed the schema"


def test_the_per_io_parquet_and_the_converters_files_name_the_version(analyzed):
    run = analyzed(RUNS[0][0], *RUNS[0][1])
    for name in ("io.parquet", "io_stages.parquet"):
        kv = pq.read_metadata(os.path.join(run, "report", name)).metadata
        assert kv[b"ntscope_version"].decode() == ntscope.__version__, name
    meta = load(os.path.join(run, "initiator", "parquet", "metadata.json"))
    assert meta["ntscope_version"] == ntscope.__version__
    event_file = os.path.join(run, "initiator", "parquet", "nvme", "nvme_setup_cmd.parquet")
    assert pq.read_metadata(event_file).metadata[b"ntscope_version"].decode() == ntscope.__version__


@pytest.fixture(scope="module")
def compared(fixture_run, ntscope_cli):
    def run_compare(base, run, expect_rc=0):
        r = ntscope_cli("compare", base, run, "--quiet")
        assert r.returncode == expect_rc, r.stderr
        return load(os.path.join(run.split(",")[0], "report", "compare.json"))
    return run_compare


def test_compare_json_with_repeats_follows_its_schema(fixture_run, compared):
    base = ",".join(fixture_run(n) for n in ("lab-6.1-patched-digest-base", "lab-6.1-patched-digest-base-r2"))
    run = ",".join(fixture_run(n) for n in ("lab-6.1-patched-digest", "lab-6.1-patched-digest-r2"))
    doc = compared(base, run)
    assert len(doc["base_runs"]) == len(doc["run_runs"]) == 2
    assert doc["verdicts"] and doc["verdicts"][0]["verdict"] != "no verdict"
    assert_valid("compare", doc, "compare.json (repeats)")
    assert doc["ntscope_version"] == ntscope.__version__
    bad = copy.deepcopy(doc)
    bad["verdicts"][0]["cause_id"] = "gremlins"
    assert errors("compare", bad)
    bad = copy.deepcopy(doc)
    bad["interference"]["streams"][0]["extra"] = 1   # the embedded interference document is checked too
    assert errors("compare", bad)


def test_compare_json_without_a_verdict_follows_its_schema(fresh_run, compared):
    import shutil
    base, run = fresh_run("lab-6.1-stock-base-randread", "base"), fresh_run("lab-6.1-stock-slow-device", "run")
    shutil.rmtree(os.path.join(run, "target"))
    doc = compared(base, run, expect_rc=2)
    assert {v["verdict"] for v in doc["verdicts"]} == {"no verdict"}
    assert_valid("compare", doc, "compare.json (no verdict)")


def test_sweep_json_follows_its_schema(fixture_run, ntscope_cli, tmp_path):
    runs = [fixture_run(n) for n in ("lab-6.1-stock-base-randread", "lab-6.1-stock-slow-device")]
    r = ntscope_cli("sweep", *runs, "--values", "1,2", "--out", str(tmp_path), "--quiet")
    assert r.returncode == 0, r.stderr
    doc = load(os.path.join(tmp_path, "sweep.json"))
    assert doc["points"] and doc["runs"]
    assert_valid("sweep", doc, "sweep.json")
    assert doc["ntscope_version"] == ntscope.__version__
    bad = copy.deepcopy(doc)
    bad["points"][0]["lad_mean"] = "x2"
    assert errors("sweep", bad)


def test_compare_schema_validates_alone_with_the_standard_one_liner(fixture_run, compared):
    # no registry: every $ref resolves inside the file (tools/bundle_schemas.py embeds the
    # interference schema), so `jsonschema.validate(doc, schema)` works as users write it
    r = subprocess.run([sys.executable, os.path.join(REPO, "tools", "bundle_schemas.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = compared(fixture_run("lab-6.1-stock-base-randread"), fixture_run("lab-6.1-stock-slow-device"))
    jsonschema.validate(doc, load(os.path.join(REPO, "reports", "schemas", "compare.schema.json")))
    broken = copy.deepcopy(doc)
    broken["interference"]["streams"] = "not a list"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, load(os.path.join(REPO, "reports", "schemas", "compare.schema.json")))
