"""The fleet's declaration (reports/registry.py): `ntscope fleet ingest|report|sql`."""
from ntscope.reports.registry import Analysis

ANALYSIS = Analysis(
    name="fleet", order=70, command="fleet", schema=True,
    summary="many runs: ingest them in parallel (Ray) into Iceberg tables, report per target / initiator / tenant",
    writes=("fleet.txt", "fleet.json", "fleet.html"))
