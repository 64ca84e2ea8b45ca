"""The test oracle: what an environment's views return must equal a from-scratch build of the same files.

The fresh build copies the project folder, renames its schema prefix (so its views and physical tables never touch
the environment under test) and builds it in a fresh SQLite state store (the copy's own ``.sparkmesh/``) through
the package's Python API: one plan over the same range, applied to ``prod``. Each view is then reduced to a
digest: its columns, its row count and an order-independent checksum per column (sum of xxhash64), so two builds
agree exactly when they hold the same multiset of rows.
"""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.snapshot.naming import quote, quote_identifier, view_name
from dagster_sparkmesh.state.store import open_state_store

# The fresh build's clock: after every range the tests use, so no interval is "not due yet".
ORACLE_CLOCK = datetime(2024, 3, 1)


@dataclass(frozen=True)
class ViewDigest:
    """What a view returns, reduced: (column, type) pairs, row count, and a checksum per column plus one per row."""

    columns: tuple[tuple[str, str], ...]
    rows: int
    checksums: tuple[str, ...]


@dataclass(frozen=True)
class Divergence:
    model: str
    """Without the schema prefix, e.g. ``m.latest``."""
    expected: ViewDigest | str
    actual: ViewDigest | str
    """A digest, or the error the query raised (a view reading a dropped table)."""

    def describe(self) -> str:
        return f"{self.model}: expected {_short(self.expected)}, got {_short(self.actual)}"


def digest_view(engine, name: str) -> ViewDigest | str:
    """The digest of ``name``, or the error message when it cannot be read."""
    spark = engine.spark
    try:
        fields = [(f.name, f.dataType.simpleString()) for f in spark.table(name).schema.fields]
        hashes = [f"xxhash64({quote_identifier(column)})" for column, _ in fields]
        hashes.append("xxhash64(" + ", ".join(quote_identifier(c) for c, _ in fields) + ")")
        # DECIMAL: a sum of 64-bit hashes overflows BIGINT, which ANSI mode refuses.
        sums = ", ".join(f"CAST(SUM(CAST({h} AS DECIMAL(38, 0))) AS STRING)" for h in hashes)
        row = spark.sql(f"SELECT COUNT(*), {sums} FROM {quote(name)}").collect()[0]
    except Exception as error:  # noqa: BLE001 - an unreadable view is a finding, not a test crash
        return f"{type(error).__name__}: {str(error).splitlines()[0][:200]}"
    return ViewDigest(columns=tuple(fields), rows=int(row[0]), checksums=tuple(str(v) for v in row[1:]))


def environment_digests(engine, project_dir: Path, prefix: str, environment: str = "prod") -> dict[str, ViewDigest | str]:
    """Digest of every model as ``environment`` shows it (its view; for a development environment's unchanged
    model, which has no view, the table its models read), keyed by model name without the prefix."""
    project = load_project(project_dir, use_cache=False)
    with open_state_store(None, project_dir) as state:
        record = state.get_environment(environment)
    digests = {}
    for name, model in sorted(project.models.items()):
        if model.enabled:
            relation = record.relation_of(name) if record is not None else view_name(name, environment)
            digests[name.removeprefix(prefix)] = digest_view(engine, relation)
    return {**digests, **_views_of_no_model(engine, project, prefix, environment)}


def _views_of_no_model(engine, project, prefix: str, environment: str) -> dict[str, ViewDigest | str]:
    """Views left in the environment's schemas for models the files no longer have (a deleted or renamed model's):
    a fresh build has none, so each is a divergence."""
    views = {view_name(name, environment) for name in project.models}
    found = {}
    for schema in sorted({view.split(".")[0] for view in views}):
        if engine.spark.catalog.databaseExists(schema):
            for table in engine.spark.catalog.listTables(schema):
                qualified = f"{schema}.{table.name}"
                if qualified not in views and table.tableType == "VIEW" and not table.isTemporary:
                    found[qualified.removeprefix(prefix)] = digest_view(engine, qualified)
    return found


def fresh_build(engine, project_dir: Path, prefix: str, workdir: Path, *, end: datetime, start: datetime | None = None) -> tuple[Path, str]:
    """Build a copy of ``project_dir`` from scratch into ``prod`` under a new prefix; return (folder, prefix)."""
    fresh_prefix = f"o{uuid.uuid4().hex[:8]}_"
    folder = workdir / f"fresh_{fresh_prefix}"
    shutil.copytree(project_dir, folder, ignore=shutil.ignore_patterns(".sparkmesh"))
    for file in folder.rglob("*"):
        if file.is_file() and file.suffix in {".sql", ".py", ".yaml", ".yml"}:
            file.write_text(file.read_text().replace(prefix, fresh_prefix))
    ctx = ExecutionContext(
        project=load_project(folder, use_cache=False),
        state=open_state_store(None, folder),
        environment="prod",
        engine_factory=lambda: engine,
        clock=lambda: ORACLE_CLOCK,
    )
    try:
        apply_plan(ctx, plan_for(ctx, start, end))
    finally:
        ctx.state.close()
    return folder, fresh_prefix


def compare_with_fresh_build(
    engine,
    project_dir: Path,
    prefix: str,
    workdir: Path,
    *,
    end: datetime,
    start: datetime | None = None,
    environment: str = "prod",
) -> list[Divergence]:
    """Every model whose ``environment`` view differs from a fresh build of the same files over [start, end)."""
    actual = environment_digests(engine, project_dir, prefix, environment)
    folder, fresh_prefix = fresh_build(engine, project_dir, prefix, workdir, end=end, start=start)
    try:
        expected = environment_digests(engine, folder, fresh_prefix)
    finally:
        drop_schemas(engine, [fresh_prefix])
    return diff_digests(expected, actual)


def diff_digests(expected: dict[str, ViewDigest | str], actual: dict[str, ViewDigest | str]) -> list[Divergence]:
    names = sorted(set(expected) | set(actual))
    return [
        Divergence(model=n, expected=expected.get(n, "missing"), actual=actual.get(n, "missing"))
        for n in names
        if expected.get(n) != actual.get(n)
    ]


def drop_schemas(engine, prefixes: Iterable[str]) -> None:
    """Drop the view schemas and physical schemas of these prefixes (``p_src``, ``sparkmesh__p_m``, ...)."""
    spark = engine.spark
    wanted = tuple(prefixes)
    for (schema,) in spark.sql("SHOW DATABASES").collect():
        bare = schema.removeprefix("sparkmesh__")
        if bare.startswith(wanted):
            spark.sql(f"DROP DATABASE IF EXISTS {quote_identifier(schema)} CASCADE")


def _short(value: ViewDigest | str) -> str:
    if isinstance(value, str):
        return value
    return f"{value.rows} rows, columns {[c for c, _ in value.columns]}, checksums {[c[:8] for c in value.checksums]}"
