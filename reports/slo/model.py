"""report.json's slo: the slo views of the run's connection (sql/slo/slo.sql judges the
objectives that objectives.load gave it) as rows. No computation here."""
from ntscope.sql.query_rows import rows_of as rows


def slo_document(con):
    """{objectives, per_second, worst_ios}: empty lists without --slo."""
    return {"objectives": rows(con, "SELECT * FROM slo_results ORDER BY slo_id"),
            "per_second": rows(con, "SELECT * FROM slo_per_second ORDER BY slo_id, second"),
            "worst_ios": rows(con, "SELECT * FROM slo_worst_ios ORDER BY slo_id, rank")}
