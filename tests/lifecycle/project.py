"""The lifecycle project: 8 tiny models written from a typed spec into a folder, under a schema prefix.

Every schema name carries the prefix, so an environment under test and its from-scratch twin (the oracle's fresh
build, same files with another prefix) share the Spark session without sharing a view or a physical table.
``{x}.adjustments`` is an external table (``ds DATE, bonus INT``, empty at first) whose rows add to the source's
amounts: late data, which a restatement of ``src.events`` brings in. Its schema has a prefix of its own, so the
fresh build reads the same table.

Edits (breaking, non-breaking, metadata-only) are new specs written over the same folder, as a user edits files.

| model              | kind                                   | reads                       |
|--------------------|----------------------------------------|-----------------------------|
| {p}src.customers   | SEED                                   | seeds/customers.csv         |
| {p}src.events      | INCREMENTAL_BY_TIME_RANGE (generated)  | a date spine; {x}.adjustments |
| {p}m.daily         | INCREMENTAL_BY_TIME_RANGE              | events, customers           |
| {p}m.rolling       | INCREMENTAL_BY_TIME_RANGE, lookback 2  | events (3-day window)       |
| {p}m.customer_totals | FULL                                 | customers, events           |
| {p}m.region_totals | FULL                                   | daily                       |
| {p}m.latest        | INCREMENTAL_BY_UNIQUE_KEY              | events                      |
| {p}m.report        | VIEW                                   | customer_totals, latest     |

The source's amounts also go through two Python macros (``macros/amounts.py``): ``@scale()`` returns a constant,
``@day_offset()`` reads the interval (``evaluator.locals``) before returning one; editing either is a breaking
change that only the macros' code says.
"""

from __future__ import annotations

import dataclasses
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path

START = "2024-01-01"
MODELS = ("src.customers", "src.events", "m.daily", "m.rolling", "m.customer_totals", "m.region_totals", "m.latest", "m.report")
PARTITIONED = ("src.events", "m.daily", "m.rolling", "m.latest")
"""The time-partitioned models: in Dagster, the assets a partition range selects."""
CONFIG = "model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n  cron: '@daily'\n"
SEED_ROWS = "customer_id,region\n1,north\n2,north\n3,south\n4,south\n5,east\n6,east\n"


@dataclass(frozen=True)
class ProjectSpec:
    """What the files say. ``formula`` changes what the source computes (breaking for every descendant);
    ``extra_columns`` adds that many columns to the FULL customer_totals (non-breaking, read by the VIEW report);
    ``owner`` and ``end`` are metadata only. The fuzzer only ever raises ``formula`` and ``extra_columns``, so an
    edit never returns to an older version (whose table predates late data restated since)."""

    formula: int = 3
    extra_columns: int = 0
    owner: str = "alice"
    end: str | None = None
    scale: int = 1
    """What the ``@scale()`` macro returns (a plain Python macro)."""
    day_offset: int = 0
    """What the ``@day_offset()`` macro returns after reading the interval (a macro that reads the run's locals)."""
    source_columns: int = 0
    """Extra columns of the source, added by forward-only changes."""
    default_batch_size: int | None = None
    """``model_defaults.batch_size`` in config.yaml (how many intervals each incremental model computes at once)."""
    region_renames: int = 0
    """How many times m.region_totals was renamed (a rename is a deletion and an addition; names never repeat)."""
    start: str | None = None
    """Every model's ``start`` (None: model_defaults' 2024-01-01); the fuzzer only ever moves it earlier."""
    source_extra_type: str = "INT"
    """The type of the source's last extra column (a retype is refused forward-only and then taken back)."""
    latest_repeats_keys: bool = False
    """Whether m.latest's query returns several rows per customer (refused before writing, then taken back)."""

    @property
    def region_model(self) -> str:
        return "m.region_totals" + (f"_{self.region_renames}" if self.region_renames else "")


@dataclass(frozen=True)
class LifecycleProject:
    path: Path
    prefix: str
    external_schema: str

    def name(self, model: str) -> str:
        """``m.latest`` → the prefixed model name, e.g. ``lc1a2b_m.latest``."""
        return f"{self.prefix}{model}"


def write_project(folder: Path, prefix: str, external_schema: str, spec: ProjectSpec = ProjectSpec()) -> LifecycleProject:
    """The caller creates the external table (``create_external_table``) before planning."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "external_models.yaml").write_text(
        f"- name: {external_schema}.adjustments\n  columns:\n    ds: DATE\n    bonus: INT\n"
    )
    (folder / "seeds").mkdir(exist_ok=True)
    (folder / "seeds" / "customers.csv").write_text(SEED_ROWS)
    project = LifecycleProject(path=folder, prefix=prefix, external_schema=external_schema)
    write_spec(project, spec)
    return project


MACROS = """
from sqlmesh import macro


@macro()
def scale(evaluator):
    return {scale}


@macro()
def day_offset(evaluator):
    evaluator.locals.get("start_ds")
    return {day_offset}
"""


def _config(spec: ProjectSpec) -> str:
    # On a session serving a lakehouse format (tests/conftest.py), the project's tables are in that format.
    table_format = os.environ.get("SPARKMESH_TEST_TABLE_FORMAT")
    return (
        CONFIG
        + (f"  batch_size: {spec.default_batch_size}\n" if spec.default_batch_size else "")
        + (f"  table_format: {table_format}\n" if table_format else "")
    )


def _write_if_changed(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _write_macros(project: LifecycleProject, spec: ProjectSpec) -> None:
    folder = project.path / "macros"
    folder.mkdir(exist_ok=True)
    text = textwrap.dedent(MACROS).format(scale=spec.scale, day_offset=spec.day_offset).lstrip()
    target = folder / "amounts.py"
    if not target.exists() or target.read_text() != text:
        target.write_text(text)


def write_spec(project: LifecycleProject, spec: ProjectSpec) -> None:
    """Rewrite every model file from ``spec``; files whose text is unchanged are left untouched."""
    _write_if_changed(project.path / "config.yaml", _config(spec))
    _write_macros(project, spec)
    models = project.path / "models"
    models.mkdir(exist_ok=True)
    for file_name, text in _model_texts(project.prefix, project.external_schema, spec).items():
        target = models / file_name
        rendered = textwrap.dedent(text).strip() + "\n"
        if not target.exists() or target.read_text() != rendered:
            target.write_text(rendered)


def with_changes(spec: ProjectSpec, **changes) -> ProjectSpec:
    return dataclasses.replace(spec, **changes)


def _meta(spec: ProjectSpec) -> str:
    end = f",\n  end '{spec.end}'" if spec.end else ""
    start = f",\n  start '{spec.start}'" if spec.start else ""
    return f"owner {spec.owner}{end}{start}"


def create_external_table(engine, project: LifecycleProject) -> None:
    spark = engine.spark
    spark.sql(f"CREATE DATABASE IF NOT EXISTS {project.external_schema}")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {project.external_schema}.adjustments (ds DATE, bonus INT) USING parquet")


def add_late_data(engine, project: LifecycleProject, days: list[str], bonus: int) -> None:
    """Late data: ``bonus`` more on every event of ``days`` (only a restatement brings it into the source)."""
    values = ", ".join(f"(DATE'{d}', {int(bonus)})" for d in days)
    engine.spark.sql(f"INSERT INTO {project.external_schema}.adjustments VALUES {values}")


def _extra_column(k: int) -> str:
    if k == 1:
        return ",\n  MAX(e.ds) AS last_event_ds"
    return f",\n  COALESCE(MAX(e.amount), 0) + {k} AS extra_{k}"


def _source_column(k: int, data_type: str = "INT") -> str:
    return f",\n  CAST(i.id * {k} AS {data_type}) AS source_extra_{k}"


def _model_texts(p: str, x: str, spec: ProjectSpec) -> dict[str, str]:
    meta = _meta(spec)
    last = spec.source_columns
    source_extra = "".join(_source_column(k, spec.source_extra_type if k == last else "INT") for k in range(1, last + 1))
    latest_filter = "recency <= 2" if spec.latest_repeats_keys else "recency = 1"
    extra = "".join(_extra_column(k) for k in range(1, spec.extra_columns + 1))
    return {
        "customers.sql": f"""
            MODEL (
              name {p}src.customers,
              kind SEED (path '../seeds/customers.csv'),
              columns (customer_id INT, region STRING),
              grain customer_id,
              {meta}
            );
        """,
        # A daily source generated from a date spine: no external data, and its formula is the breaking edit.
        "events.sql": f"""
            MODEL (
              name {p}src.events,
              kind INCREMENTAL_BY_TIME_RANGE (time_column ds, on_destructive_change allow),
              grain (ds, event_id),
              {meta}
            );

            SELECT
              d.ds,
              CAST(dayofmonth(d.ds) * 100 + i.id AS INT) AS event_id,
              CAST((i.id * 5 + dayofmonth(d.ds)) % 6 + 1 AS INT) AS customer_id,
              CAST(i.id * {spec.formula} + dayofmonth(d.ds) * @scale() + @day_offset() + COALESCE(a.bonus, 0) AS INT)
                AS amount{source_extra}
            FROM (SELECT explode(sequence(CAST(@start_ds AS DATE), CAST(@end_ds AS DATE), INTERVAL 1 DAY)) AS ds) AS d
            CROSS JOIN (SELECT explode(sequence(1, 8)) AS id) AS i
            LEFT JOIN (
              SELECT ds, SUM(bonus) AS bonus FROM {x}.adjustments
              WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds
            ) AS a ON a.ds = d.ds
            WHERE (i.id + dayofmonth(d.ds)) % 5 <> 0
        """,
        "daily.sql": f"""
            MODEL (
              name {p}m.daily,
              kind INCREMENTAL_BY_TIME_RANGE (time_column ds),
              grain (ds, region),
              {meta}
            );

            SELECT e.ds, c.region, SUM(e.amount) AS amount, COUNT(*) AS events
            FROM {p}src.events AS e
            JOIN {p}src.customers AS c ON e.customer_id = c.customer_id
            WHERE e.ds BETWEEN @start_ds AND @end_ds
            GROUP BY e.ds, c.region
        """,
        # Each day's row reads the source's last 3 days: a restated source day changes the 2 rows after it.
        "rolling.sql": f"""
            MODEL (
              name {p}m.rolling,
              kind INCREMENTAL_BY_TIME_RANGE (time_column ds, lookback 2),
              grain ds,
              {meta}
            );

            SELECT d.ds, SUM(e.amount) AS amount_3d, COUNT(*) AS events_3d
            FROM (SELECT DISTINCT ds FROM {p}src.events WHERE ds BETWEEN @start_ds AND @end_ds) AS d
            JOIN {p}src.events AS e ON e.ds BETWEEN date_sub(d.ds, 2) AND d.ds
            GROUP BY d.ds
        """,
        "customer_totals.sql": f"""
            MODEL (
              name {p}m.customer_totals,
              kind FULL,
              grain customer_id,
              {meta}
            );

            SELECT
              c.customer_id,
              c.region,
              COUNT(e.event_id) AS events,
              COALESCE(SUM(e.amount), 0) AS amount{extra}
            FROM {p}src.customers AS c
            LEFT JOIN {p}src.events AS e ON e.customer_id = c.customer_id
            GROUP BY c.customer_id, c.region
        """,
        "region_totals.sql": f"""
            MODEL (
              name {p}{spec.region_model},
              kind FULL,
              grain region,
              {meta}
            );

            SELECT region, SUM(amount) AS amount, SUM(events) AS events, COUNT(DISTINCT ds) AS days
            FROM {p}m.daily
            GROUP BY region
        """,
        # Latest event per customer: each interval upserts the customers seen in it.
        "latest.sql": f"""
            MODEL (
              name {p}m.latest,
              kind INCREMENTAL_BY_UNIQUE_KEY (unique_key customer_id),
              grain customer_id,
              {meta}
            );

            WITH ranked AS (
              SELECT
                customer_id,
                ds,
                amount,
                ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY ds DESC, event_id DESC) AS recency
              FROM {p}src.events
              WHERE ds BETWEEN @start_ds AND @end_ds
            )
            SELECT customer_id, ds AS last_ds, amount AS last_amount
            FROM ranked
            WHERE {latest_filter}
        """,
        # SELECT t.*: a column added to customer_totals must show here, read from its current table.
        "report.sql": f"""
            MODEL (
              name {p}m.report,
              kind VIEW,
              {meta}
            );

            SELECT t.*, l.last_ds, l.last_amount
            FROM {p}m.customer_totals AS t
            LEFT JOIN {p}m.latest AS l ON t.customer_id = l.customer_id
        """,
    }
