"""tenants.json: the rows of the tenants views (sql/tenants/seconds.sql, sql/core/tenants.sql)
as one document; computes nothing."""
from ntscope import __version__
from ntscope.sql.query_rows import rows_of

SCHEMA = "ntscope.tenants/1"


def build(con, run_dir, tenants_file):
    objectives = rows_of(con, "SELECT * FROM class_objective_results ORDER BY class, objective_n")
    blame = rows_of(con, "SELECT * FROM class_blame WHERE blame_rank <= 3 ORDER BY class, second, shared, blame_rank")
    classes = list(dict.fromkeys(o["class"] for o in objectives))
    return {
        "schema": SCHEMA,
        "ntscope_version": __version__,
        "run_dir": str(run_dir),
        "tenants_file": tenants_file,
        "attribution": rows_of(con, "SELECT * FROM tenant_attribution ORDER BY host"),
        "tenants": rows_of(con, "SELECT name AS tenant, class, cgroups, files, namespaces, target_devices, ios, bytes, "
                                "seconds, mean_us, p99_us, iops, mb_s FROM owner_summary WHERE kind = 'tenant' "
                                "ORDER BY ios DESC, tenant"),
        "files": rows_of(con, "SELECT name AS file, tenants, cgroups, namespaces, target_devices, ios, bytes, seconds, "
                              "mean_us, p99_us, iops, mb_s FROM owner_summary WHERE kind = 'file' ORDER BY ios DESC, file"),
        "cgroups": rows_of(con, "SELECT * FROM cgroup_io ORDER BY host, cgroup"),
        "namespaces": rows_of(con, "SELECT * FROM namespace_devices ORDER BY namespace, target_device"),
        "classes": [{"class": c,
                     "objectives": [o for o in objectives if o["class"] == c],
                     "blame": [b for b in blame if b["class"] == c]} for c in classes],
        "limits": rows_of(con, "SELECT * FROM class_limits ORDER BY class NULLS LAST, tenant, cgroup"),
        "outputs": {"seconds": "tenant_seconds.parquet", "file_seconds": "file_seconds.parquet",
                    "class_seconds": "class_seconds.parquet"},
    }


def unrecorded(con, run_dir):
    """The document of a run whose I/Os have no owner and no tenants file: why (attribution),
    which namespaces sit on which drive, and nothing per tenant."""
    return {"schema": SCHEMA, "ntscope_version": __version__, "run_dir": str(run_dir), "tenants_file": None,
            "attribution": rows_of(con, "SELECT * FROM tenant_attribution ORDER BY host"),
            "tenants": [], "files": [], "cgroups": [],
            "namespaces": rows_of(con, "SELECT * FROM namespace_devices ORDER BY namespace, target_device"),
            "classes": [], "limits": [],
            "outputs": {"seconds": "tenant_seconds.parquet", "file_seconds": "file_seconds.parquet",
                        "class_seconds": "class_seconds.parquet"}}


def recorded(doc):
    """True when some I/O has its cgroup, or a tenants file was given: the text goes on stdout."""
    return bool(doc["tenants_file"]) or any(a["ios_with_cgroup"] for a in doc["attribution"])
