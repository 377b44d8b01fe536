"""Query results as the report models read them: rows as dicts, and the top keys of a
time-series view."""

def rows_of(con, sql, params=None):
    """The rows of a query as dicts (column name -> value): what the report models read."""
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def top_series_rows(con, view, key, weight, rank, n):
    """The rows of a time-series VIEW (one row per KEY and bin) for its first N keys by RANK (an
    ORDER BY over KEY and WEIGHT, the key's per-run total), ordered by RANK, then bin. The view
    is evaluated once for the ranking and the rows (MATERIALIZED): read twice, it aggregated
    every I/O twice (the interference streams' 0.31 -> 0.16 s at 773 k I/Os). VIEW, KEY,
    WEIGHT, RANK are the callers' constants, never user input."""
    return rows_of(con, f"WITH t AS MATERIALIZED (FROM {view}), "
                        f"top AS (SELECT {key} FROM (SELECT DISTINCT {key}, {weight} FROM t) ORDER BY {rank} LIMIT ?) "
                        f"SELECT * FROM t WHERE {key} IN (FROM top) ORDER BY {rank}, bin", [n])
