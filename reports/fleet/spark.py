"""Spark SQL over the fleet's tables (the cluster engine past one machine): a SparkSession whose
catalog `ntscope` is Iceberg's JdbcCatalog on the same catalog database pyiceberg writes (the
embedded SQLite one: its tables iceberg_tables / iceberg_namespace_properties are the JDBC
catalog's), so `SELECT ... FROM ntscope.ntscope.io` reads the very tables `fleet ingest`
commits. Local mode here; on a cluster the same settings go to spark-submit.

The two jars come from Maven Central into the cache (JARS: pinned versions and their SHA-256),
once; pyspark itself from PyPI (the `fleet-spark` extra)."""
import os
import urllib.request

from ntscope.common.derived import sha256_of
from ntscope.common.errors import NtscopeError

MAVEN = "https://repo1.maven.org/maven2"
# (group path, artifact, version, sha256): the Iceberg runtime of pyspark 3.5 (Scala 2.12) and the
# SQLite JDBC driver of the embedded catalog
JARS = (
    ("org/apache/iceberg", "iceberg-spark-runtime-3.5_2.12", "1.10.1",
     "39ea09e6c03550a300b9d9ab498949836d2d434e441da4c12a943a086e396940"),
    ("org/xerial", "sqlite-jdbc", "3.50.3.0", "a3f53a2aa15ae9425a9e793bbe9c8e5288febeb4b65ef5c1a4e80d4c2045cf08"),
)


def jar_dir():
    return os.path.join(os.environ.get("NTSCOPE_CACHE") or os.path.expanduser("~/.cache/ntscope"), "jars")


def digest_of(path):
    return sha256_of(path, "jar")[0]


def jars():
    """The jars' paths, downloaded into jar_dir() when missing (checked against their SHA-256;
    written to a temporary name, then renamed)."""
    os.makedirs(jar_dir(), exist_ok=True)
    paths = []
    for group, artifact, version, digest in JARS:
        name = f"{artifact}-{version}.jar"
        path = os.path.join(jar_dir(), name)
        if not os.path.isfile(path) or digest_of(path) != digest:
            url = f"{MAVEN}/{group}/{artifact}/{version}/{name}"
            tmp = f"{path}.{os.getpid()}.tmp"
            try:
                urllib.request.urlretrieve(url, tmp)
            except OSError as e:
                raise NtscopeError(f"cannot download {url}: {e}; fix: put {name} into {jar_dir()} "
                                   "(Maven Central), or check the network") from None
            got = digest_of(tmp)
            if got != digest:
                os.unlink(tmp)
                raise NtscopeError(f"{url} has SHA-256 {got}, not {digest}; fix: check the proxy or mirror "
                                   "serving Maven Central")
            os.replace(tmp, path)
        paths.append(path)
    return paths


def session(warehouse):
    """A local SparkSession with the fleet's catalog as `ntscope` (the embedded catalog in
    WAREHOUSE, the folder `fleet ingest --warehouse` wrote)."""
    from pyspark.sql import SparkSession
    path = os.path.abspath(warehouse)
    return (SparkSession.builder.master("local[2]").appName("ntscope-fleet")
            .config("spark.jars", ",".join(jars()))
            .config("spark.ui.enabled", "false")
            .config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
            .config("spark.sql.catalog.ntscope", "org.apache.iceberg.spark.SparkCatalog")
            .config("spark.sql.catalog.ntscope.catalog-impl", "org.apache.iceberg.jdbc.JdbcCatalog")
            .config("spark.sql.catalog.ntscope.uri", f"jdbc:sqlite:{os.path.join(path, 'catalog.db')}")
            .config("spark.sql.catalog.ntscope.warehouse", f"file://{path}")
            .config("spark.sql.catalog.ntscope.jdbc.schema-version", "V0")
            .getOrCreate())
