"""sql/REFERENCE.md, the view reference, is generated from the SQL files' comments and a real
run's columns (ntscope.sql.reference, sql/reference.py): it must be current, name every relation a run's
database holds, and every statement of sql/ must carry its comment."""
from ntscope.sql import reference as view_reference
from ntscope.sql import views

RUN = "lab-6.1-patched-nic-flows"   # the reference's run: patched, cpu_wait and net_flows recorded


def relations_of(run):
    con = views.connect(run, interference=True)
    try:
        return view_reference.run_relations(con)
    finally:
        con.close()


def test_every_relation_of_a_run_is_in_the_reference(fixture_run):
    relations = relations_of(fixture_run(RUN))
    assert len(relations) > 100
    assert view_reference.undocumented(relations) == []
    # the loader's own relations are there, and a few of every layer
    for name in ("raw_nvme", "run_hosts", "events", "nvme_commands", "io", "io_stages", "pipeline_stats",
                 "intf_timeseries", "io_cpu_wait"):
        assert name in relations, name


def test_every_statement_carries_its_comment():
    bare = [(name, f) for name, (f, kind, block) in view_reference.documented().items() if not block]
    assert bare == []


def test_the_reference_is_current(fixture_run):
    text = view_reference.render(relations_of(fixture_run(RUN)))
    with open(view_reference.REFERENCE) as f:
        current = f.read()
    assert current == text, "sql/REFERENCE.md is stale: python -m ntscope.sql.reference RUN (a converted copy of fixtures/" + RUN + ")"
