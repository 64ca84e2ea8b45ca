"""The Spark settings that make a session serve Apache Iceberg or Delta Lake tables, and the check that it does.

Both formats take over Spark's session catalog (``spark_catalog``), as a Spark team configures them: Iceberg's
``SparkSessionCatalog`` keeps Iceberg tables in the same Hive metastore as every other table and view, and Delta's
``DeltaCatalog`` does the same for Delta tables. So a model's physical table keeps its two-part name, and an
environment's view reads it like any other table. One session serves one of them (``model.table_formats``).

The jars come from Maven Central through Spark's package mechanism on a session's first start, into an Ivy cache
outside the project (``SPARKMESH_IVY_DIR``, default ``~/.cache/dagster-sparkmesh/ivy``); later starts resolve
from the cache. Versions: the newest releases for the pinned Spark minor (4.1).

Iceberg's Hive client in the embedded metastore: Spark's own Hive client pools Derby connections with HikariCP,
while Iceberg's would ask for BoneCP, which Spark no longer ships; and Hive's lock tables do not exist there, so
Iceberg commits without the metastore's lock (writers of one table take turns under the state store's table
lock; Iceberg's optimistic commit refuses a lost race).
"""

from __future__ import annotations

import os
from pathlib import Path

from dagster_sparkmesh.errors import EngineError
from dagster_sparkmesh.model.table_formats import DELTA, ICEBERG, ICEBERG_CATALOG_CLASS

ICEBERG_PACKAGE = "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.12.0"
DELTA_PACKAGE = "io.delta:delta-spark_4.1_2.13:4.4.0"
IVY_DIR_VARIABLE = "SPARKMESH_IVY_DIR"

SESSION_CATALOGS = {
    ICEBERG: "org.apache.iceberg.spark.SparkSessionCatalog",
    DELTA: "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}
ICEBERG_CATALOGS = (SESSION_CATALOGS[ICEBERG], ICEBERG_CATALOG_CLASS)
_EXTENSIONS = {
    ICEBERG: "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
    DELTA: "io.delta.sql.DeltaSparkSessionExtension",
}
# Delta's release lists jars that Spark already ships (Hadoop's client, Parquet, Jackson, logging, compression):
# the driver would load Spark's own copies first anyway, so they are not downloaded (59 MB instead of 134 MB).
_DELTA_EXCLUDES = (
    "org.apache.hadoop:hadoop-client-runtime", "org.apache.hadoop:hadoop-client-api",
    "org.apache.parquet:parquet-hadoop", "org.apache.parquet:parquet-column", "org.apache.parquet:parquet-common",
    "org.apache.parquet:parquet-encoding", "org.apache.parquet:parquet-format-structures",
    "org.apache.parquet:parquet-jackson", "com.fasterxml.jackson.core:jackson-databind",
    "com.fasterxml.jackson.core:jackson-core", "com.fasterxml.jackson.core:jackson-annotations",
    "com.fasterxml.jackson.datatype:jackson-datatype-jdk8", "org.slf4j:slf4j-api",
    "org.apache.logging.log4j:log4j-slf4j2-impl", "org.apache.logging.log4j:log4j-api",
    "org.apache.logging.log4j:log4j-core", "org.xerial.snappy:snappy-java", "com.github.luben:zstd-jni",
    "org.roaringbitmap:RoaringBitmap", "org.roaringbitmap:shims", "commons-logging:commons-logging",
    "io.airlift:aircompressor", "commons-pool:commons-pool", "com.google.code.findbugs:jsr305",
    "javax.annotation:javax.annotation-api",
)


def ivy_dir() -> Path:
    configured = os.environ.get(IVY_DIR_VARIABLE)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "dagster-sparkmesh" / "ivy"


def lakehouse_settings(table_format: str) -> dict[str, str]:
    """The static settings a sparkmesh-started JVM needs to serve ``table_format`` tables."""
    settings = {
        "spark.jars.ivy": str(ivy_dir().resolve()),
        "spark.sql.extensions": _EXTENSIONS[table_format],
        "spark.sql.catalog.spark_catalog": SESSION_CATALOGS[table_format],
    }
    if table_format == ICEBERG:
        settings.update({
            "spark.jars.packages": ICEBERG_PACKAGE,
            "spark.sql.catalog.spark_catalog.type": "hive",
            # Another process (a Dagster step, a CLI command) may commit to a table at any time: a cached table
            # would read a snapshot up to 30 s old, and a table dropped and created again would not be found.
            "spark.sql.catalog.spark_catalog.cache-enabled": "false",
            "spark.hadoop.datanucleus.connectionPoolingType": "HikariCP",
            "spark.hadoop.datanucleus.schema.autoCreateTables": "true",
            # Spark's Hive client sets this one for itself; Iceberg's client must see the same datastore settings,
            # or each new JVM thread's metastore store (one per thread) rebuilds the shared connection factory and
            # its pools: 0.15-0.9 s on the first catalog call of every worker thread, pools leaked.
            "spark.hadoop.datanucleus.schema.autoCreateAll": "true",
            "spark.hadoop.hive.metastore.schema.verification": "false",  # (else Hive turns the one above off)
            "spark.hadoop.iceberg.engine.hive.lock-enabled": "false",
        })
    else:
        settings.update({
            "spark.jars.packages": DELTA_PACKAGE,
            "spark.jars.excludes": ",".join(_DELTA_EXCLUDES),
            # Each read of a Delta table's log runs a stage of this many tasks (50 by default): a few suffice for
            # the logs of the tables a project writes.
            "spark.databricks.delta.snapshotPartitions": "2",
            # Delta keeps every table's log it read (up to 10,000) for an hour, each ~3 MB of heap: a session that
            # writes a few hundred tables (a long-lived server, a fuzz run) filled a 1 GiB heap and spent its time
            # in full collections. 50 logs bound it; a table past them reads its log again (bench/README.md).
            "spark.databricks.delta.delta.log.cacheSize": "50",
        })
    return settings


def with_lakehouse(config: dict[str, str], table_format: str | None) -> dict[str, str]:
    """A connection's extra Spark settings with the format's added; where both set one, the user's wins (a team's
    own catalog, a mirror of Maven Central)."""
    if table_format is None:
        return config
    return {**lakehouse_settings(table_format), **config}


def require_format_served(spark_conf, table_format: str, catalog: str | None = None) -> None:
    """Refuse to write a lakehouse table through a session whose catalog cannot hold it: Spark would otherwise
    fail deep in a write, or (Iceberg without its catalog) create a table that no other engine reads as Iceberg.
    ``catalog``: the model's own catalog (``project.catalogs``), which the session must know; an Iceberg table
    there needs one of Iceberg's catalogs (Delta's catalogs, like Unity Catalog, have classes of their own)."""
    if catalog is not None:
        implementation = spark_conf.get(f"spark.sql.catalog.{catalog}", None)
        if implementation is not None and (table_format != ICEBERG or implementation in ICEBERG_CATALOGS):
            return
        raise EngineError(
            f"this Spark session does not serve {table_format} tables in catalog {catalog}: "
            f"spark.sql.catalog.{catalog} is {implementation or 'not set'}",
            hint=f"declare the catalog in the connection's config (spark.sql.catalog.{catalog} and its options); "
            "a running server keeps the settings it started with: `sparkmesh spark stop`",
        )
    session_catalog = spark_conf.get("spark.sql.catalog.spark_catalog", None)
    wanted = SESSION_CATALOGS[table_format]
    if session_catalog == wanted:
        return
    raise EngineError(
        f"this Spark session does not serve {table_format} tables: its spark_catalog is {session_catalog or 'Spark’s own'}",
        hint=f"a session sparkmesh starts sets it up by itself (restart a running server: `sparkmesh spark stop`); "
        f"a server of your own needs spark.sql.catalog.spark_catalog={wanted} and the format's jars",
    )
