"""MODEL (...) header: every property, every kind, defaults, and precise errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model import AuditCall
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.sql.model import parse_sql_model

FULL_HEADER = """-- a comment before the header
model (
  NAME Shop.Orders,  -- comments inside the header are fine
  kind INCREMENTAL_BY_TIME_RANGE (
    time_column (ds, '%Y-%m-%d'),
    lookback 2,
    batch_size 7,
    forward_only true,
    disable_restatement true,
    on_destructive_change allow,
    on_additive_change warn, auto_restatement_cron '0 0 * * 0', auto_restatement_intervals 3
  ),
  cron '0 6 * * *',
  start '2024-01-01',
  end '2024-12-31',
  owner 'jen',
  description 'Orders, it''s (really) nice; with a semicolon',
  tags [finance, 'big table'],
  grain (id, ds),
  partitioned_by ds,
  columns (id INT, name VARCHAR, amount DECIMAL(10, 2)),
  column_descriptions (id = 'the id', name = 'who'),
  audits (not_null(columns := (id, ds)), unique_values(columns := [id]), number_of_rows(threshold := 10), my_check),
  dialect duckdb,
  enabled true,
  depends_on [shop.extra],
);
SELECT id, name, amount, ds FROM raw.orders WHERE ds BETWEEN @start_ds AND @end_ds
"""


def parse(text: str, defaults: ModelDefaults | None = None, variables: dict | None = None, name: str = "m.sql"):
    return parse_sql_model(Path(name), text, defaults or ModelDefaults(), variables or {})


def test_every_property_is_read():
    parsed = parse(FULL_HEADER)
    model = parsed.model
    assert model.name == "shop.orders"
    assert model.line == 2
    assert model.kind.model_dump() == {
        "name": "INCREMENTAL_BY_TIME_RANGE",
        "time_column": "ds",
        "time_column_format": "yyyy-MM-dd",
        "lookback": 2,
        "batch_size": 7,
        "batch_concurrency": None,
        "forward_only": True,
        "disable_restatement": True,
        "on_destructive_change": "allow",
        "on_additive_change": "warn",
        "auto_restatement_cron": "0 0 * * 0",
        "auto_restatement_intervals": 3,
    }
    assert (model.cron, model.start, model.end) == ("0 6 * * *", "2024-01-01", "2024-12-31")
    assert model.owner == "jen"
    assert model.description == "Orders, it's (really) nice; with a semicolon"
    assert model.tags == ("finance", "big table")
    assert model.grains == ("id", "ds")
    assert model.partitioned_by == ("ds",)
    assert model.columns == (("id", "INT"), ("name", "STRING"), ("amount", "DECIMAL(10, 2)"))
    assert model.column_descriptions == (("id", "the id"), ("name", "who"))
    assert model.audits == (
        AuditCall(name="not_null", args=(("columns", "(id, ds)"),)),
        AuditCall(name="unique_values", args=(("columns", "(id)"),)),
        AuditCall(name="number_of_rows", args=(("threshold", "10"),)),
        AuditCall(name="my_check"),
    )
    assert model.dialect == "duckdb"
    assert model.enabled is True
    assert model.depends_on == {"shop.extra", "raw.orders"}
    assert [(ref.name, ref.line) for ref in parsed.references] == [("raw.orders", 28), ("shop.extra", 26)]


@pytest.mark.parametrize(
    ("kind_text", "expected"),
    [
        ("FULL", {"name": "FULL"}),
        ("view", {"name": "VIEW", "materialized": False}),
        ("VIEW (materialized true)", {"name": "VIEW", "materialized": True}),
        ("EMBEDDED", {"name": "EMBEDDED"}),
        (
            "INCREMENTAL_BY_TIME_RANGE (time_column ds)",
            {
                "name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds", "time_column_format": "yyyy-MM-dd",
                "lookback": 0, "batch_size": None, "batch_concurrency": None, "forward_only": False,
                "disable_restatement": False,
                "on_destructive_change": "error", "on_additive_change": "allow",
                "auto_restatement_cron": None, "auto_restatement_intervals": None,
            },
        ),
        (
            "INCREMENTAL_BY_UNIQUE_KEY (unique_key id)",
            {
                "name": "INCREMENTAL_BY_UNIQUE_KEY", "unique_key": ("id",), "when_matched": None, "merge_filter": None,
                "batch_size": None, "forward_only": False,
                "disable_restatement": False, "on_destructive_change": "error", "on_additive_change": "allow",
                "auto_restatement_cron": None,
            },
        ),
        (
            "incremental_by_unique_key (unique_key (A, b), batch_size 3)",
            {
                "name": "INCREMENTAL_BY_UNIQUE_KEY", "unique_key": ("a", "b"), "when_matched": None, "merge_filter": None,
                "batch_size": 3, "forward_only": False,
                "disable_restatement": False, "on_destructive_change": "error", "on_additive_change": "allow",
                "auto_restatement_cron": None,
            },
        ),
    ],
)
def test_kinds(kind_text, expected):
    model = parse(f"MODEL (name db.m, kind {kind_text}); SELECT 1 AS a").model
    assert model.kind.model_dump() == expected


def test_seed_and_external_kinds_have_no_query():
    seed = parse("MODEL (name db.s, kind SEED (path '../seeds/s.csv'), columns (id INT))").model
    assert (seed.kind.name, seed.kind.path, seed.source, seed.query) == ("SEED", "../seeds/s.csv", "seed", None)
    external = parse("MODEL (name db.e, kind EXTERNAL)").model
    assert (external.kind.name, external.query) == ("EXTERNAL", None)


def test_a_model_without_kind_is_a_view_and_defaults_apply():
    defaults = ModelDefaults(dialect="duckdb", start="2023-05-01", cron="@hourly", owner="team", batch_size=30)
    view = parse("MODEL (name db.v); SELECT 1::INT AS a", defaults).model
    assert (view.kind.name, view.dialect, view.start, view.cron, view.owner) == ("VIEW", "duckdb", "2023-05-01", "@hourly", "team")
    assert view.query == "SELECT CAST(1 AS INT) AS a"
    incremental = parse("MODEL (name db.i, kind INCREMENTAL_BY_TIME_RANGE (time_column ds)); SELECT ds", defaults).model
    assert incremental.kind.batch_size == 30
    written = parse("MODEL (name db.i, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 2)); SELECT ds", defaults)
    assert written.model.kind.batch_size == 2


def test_pre_and_post_statements():
    model = parse("MODEL (name db.m, kind FULL);\nSET spark.x = 1;\nCACHE TABLE db.c;\nSELECT 1 AS a;\nANALYZE TABLE db.m COMPUTE STATISTICS;").model
    assert model.pre_statements == ("SET spark.x = 1", "CACHE TABLE db.c")
    assert model.query == "SELECT 1 AS a"
    assert model.post_statements == ("ANALYZE TABLE db.m COMPUTE STATISTICS",)


def test_disabled_model_and_grain_alias():
    model = parse("MODEL (name db.m, enabled FALSE, grain id); SELECT 1 AS id").model
    assert model.enabled is False
    assert model.grains == ("id",)


def test_dependencies_skip_ctes_and_this_model_and_are_lower_case():
    parsed = parse(
        "MODEL (name db.m, kind INCREMENTAL_BY_TIME_RANGE (time_column ds));\n"
        "WITH recent AS (SELECT * FROM Raw.Events)\n"
        "SELECT r.* FROM recent r LEFT JOIN @this_model t ON r.id = t.id JOIN `Other`.`Users` u ON u.id = r.id\n"
        "WHERE r.id IN (SELECT id FROM raw.allowed)"
    )
    assert parsed.model.depends_on == {"raw.events", "other.users", "raw.allowed"}
    assert "@this_model" in parsed.model.query


def error_of(text: str, **kwargs) -> ProjectError:
    with pytest.raises(ProjectError) as caught:
        parse(text, **kwargs)
    return caught.value


@pytest.mark.parametrize(
    ("text", "message", "line", "hint"),
    [
        ("SELECT 1", "must start with a MODEL", 1, "MODEL (name"),
        ("MODEL (name db.m, kind FULL\nSELECT 1", "never closed", 1, "balance"),
        ("MODEL (name db.m,\n  kinds FULL); SELECT 1", "unknown MODEL property 'kinds'", 2, "did you mean kind"),
        ("MODEL (name db.m,\n  kind SCD_TYPE_3); SELECT 1", "unknown model kind 'SCD_TYPE_3'", 2, "did you mean SCD_TYPE_2"),
        ("MODEL (name db.m,\n  kind MERGE); SELECT 1", "unknown model kind 'MERGE'", 2, "supported kinds"),
        ("MODEL (name db.m,\n  kind INCREMENTAL_BY_TIME_RANGE); SELECT 1", "needs time_column", 2, "time_column"),
        ("MODEL (name db.m,\n  kind INCREMENTAL_BY_TIME_RANGE (time_colum ds)); SELECT 1", "unknown property", 2, "did you mean time_column"),
        ("MODEL (name db.m,\n  cron 'every day'); SELECT 1", "invalid cron 'every day'", 2, "@daily"),
        ("MODEL (name db.m,\n  cron '*/2 * * * *'); SELECT 1", "ticks more often than every 5 minutes", 2, "*/5 * * * *"),
        ("MODEL (name db.m,\n  cron '0 0 30 2 *'); SELECT 1", "the cron '0 0 30 2 *' never ticks", 2, "dates that exist"),
        ("MODEL (name db.m,\n  interval_unit fortnight); SELECT 1", "unknown interval_unit 'fortnight'", 2, "half_hour"),
        ("MODEL (name db.m, cron '@hourly',\n  interval_unit day); SELECT 1", "ticks more often than the interval unit 'day'", 1, "allow_partials true"),
        ("MODEL (name db.m,\n  start '2024-13-01'); SELECT 1", "invalid start date", 2, "ISO date"),
        ("MODEL (name db.m,\n  end 'yesterday'); SELECT 1", "invalid end date", 2, "ISO date"),
        ("MODEL (name a.b.c.d); SELECT 1", "invalid model name", 1, "schema.table"),
        ("MODEL (name shop.); SELECT 1", "invalid model name", 1, "without a schema is in the schema default"),
        ("MODEL (kind FULL); SELECT 1", "has no name", 1, "name schema.table"),
        ("MODEL (name db.m,\n dialect duckbd); SELECT 1", "unknown dialect 'duckbd'", 2, "duckdb"),
        ("MODEL (name db.m, enabled maybe); SELECT 1", "expected true or false", 1, "true or false"),
        ("MODEL (name db.m,\n allow_partials 'often'); SELECT 1", "expected true or false", 2, "true or false"),
        ("MODEL (name db.m,\n cron_tz 'Mars/Olympus'); SELECT 1", "unknown cron_tz 'Mars/Olympus'", 2, "America/Los_Angeles"),
        ("MODEL (name db.m, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id,\n when_matched (WHEN NOT MATCHED THEN INSERT *))); SELECT 1",
         "WHEN MATCHED clauses only", 2, "remove the WHEN NOT MATCHED"),
        ("MODEL (name db.m, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id,\n when_matched (WHEN MATCHED THEN UPDATE SET target.v = v))); SELECT 1",
         "reads v, which names neither source nor target", 2, "target.v = source.v"),
        ("MODEL (name db.m, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id,\n merge_filter ds > @start_ds)); SELECT 1",
         "merge_filter reads ds, which names neither", 2, "source"),
        ("MODEL (name db.m, kind INCREMENTAL_BY_TIME_RANGE (time_column ds,\n auto_restatement_cron 'sundays')); SELECT 1",
         "invalid auto_restatement_cron 'sundays'", 2, "@weekly"),
        ("MODEL (name db.m, kind INCREMENTAL_BY_TIME_RANGE (time_column ds,\n auto_restatement_intervals 0)); SELECT 1",
         "auto_restatement_intervals must be at least 1", 2, "restate everything recorded"),
        ("MODEL (name db.m, kind FULL (auto_restatement_cron '@daily')); SELECT 1",
         "unknown property 'auto_restatement_cron' of kind FULL", 1, "properties of FULL"),
        ("MODEL (name db.m, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id,\n when_matched (WHEN MATCHED THEN DELETE "
         "WHEN MATCHED AND source.v > 0 THEN UPDATE SET target.v = source.v))); SELECT 1",
         "only the last WHEN MATCHED clause may omit its condition", 2, "give the earlier clause a condition"),
        ("MODEL (name db.m, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id,\n when_matched (WHEN MATCHED AND source.ds > @start_ds "
         "THEN UPDATE SET target.v = source.v))); SELECT 1", "when_matched cannot use macros", 2, "merge_filter"),
        ("MODEL (name db.m, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id,\n batch_concurrency 4)); SELECT 1",
         "run one batch at a time", 2, "batch_concurrency 1"),
        ("MODEL (name db.m);\n\nSELECT a FROM WHERE", "SQL syntax error", 3, "fix the SQL"),
        ("MODEL (name db.m);\nSELECT 1;\nSELECT 2", "exactly one query", 3, "keep one SELECT"),
        ("MODEL (name db.m);\nSET x = 1", "has no query", 1, "write one SELECT"),
        ("MODEL (name db.m, name db.n); SELECT 1", "written twice", 1, "keep one"),
        ("MODEL (name db.m, columns (id NOTATYPE(1, 2, 3))); SELECT 1", "unknown column type", 1, "INT"),
        ("MODEL (name db.m,\n kind VIEW (materialized yes)); SELECT 1", "expected true or false", 2, "true or false"),
        ("MODEL (name db.m, kind FULL (time_column ds)); SELECT 1", "unknown property 'time_column' of kind FULL", 1, "properties of FULL"),
    ],
)
def test_header_errors(text, message, line, hint):
    error = error_of(text)
    assert message in error.message
    assert error.line == line
    assert hint in (error.hint or "")
    assert error.path == Path("m.sql")
    assert error.snippet


def test_error_snippet_quotes_the_offending_line():
    error = error_of("MODEL (\n  name db.m,\n  cron '61 * * * *'\n); SELECT 1")
    assert error.snippet.strip() == "cron '61 * * * *'"
    assert error.col == 8
    assert "m.sql:3:8: invalid cron" in str(error)


SCD_DEFAULTS = {  # forward-only and never restated unless the kind says otherwise, as in SQLMesh
    "unique_key": ("id",), "valid_from_name": "valid_from", "valid_to_name": "valid_to",
    "invalidate_hard_deletes": False, "disable_restatement": True, "forward_only": True,
    "on_destructive_change": "error", "on_additive_change": "allow", "batch_size": None, "time_data_type": "TIMESTAMP",
    "auto_restatement_cron": None,
}


@pytest.mark.parametrize(
    ("kind_text", "expected"),
    [
        (
            "SCD_TYPE_2_BY_TIME (unique_key id)",
            {**SCD_DEFAULTS, "name": "SCD_TYPE_2_BY_TIME", "updated_at_name": "updated_at",
             "updated_at_as_valid_from": False},
        ),
        (
            "scd_type_2_by_time (unique_key [Id, region], updated_at_name changed_at, valid_from_name since,\n"
            "  valid_to_name until, invalidate_hard_deletes true)",
            {
                **SCD_DEFAULTS, "name": "SCD_TYPE_2_BY_TIME", "unique_key": ("id", "region"),
                "updated_at_name": "changed_at", "valid_from_name": "since", "valid_to_name": "until",
                "invalidate_hard_deletes": True, "updated_at_as_valid_from": False,
            },
        ),
        (
            "SCD_TYPE_2_BY_COLUMN (unique_key id, columns [Name, email])",
            {**SCD_DEFAULTS, "name": "SCD_TYPE_2_BY_COLUMN", "columns": ("name", "email"),
             "execution_time_as_valid_from": False},
        ),
        (
            "SCD_TYPE_2_BY_COLUMN (unique_key id, columns *, disable_restatement false, forward_only false,\n"
            "  on_destructive_change allow, on_additive_change error)",
            {**SCD_DEFAULTS, "name": "SCD_TYPE_2_BY_COLUMN", "columns": ("*",), "disable_restatement": False,
             "forward_only": False, "on_destructive_change": "allow", "on_additive_change": "error",
             "execution_time_as_valid_from": False},
        ),
    ],
)
def test_scd_type_2_kinds(kind_text, expected):
    model = parse(f"MODEL (name db.m, kind {kind_text}); SELECT 1 AS a").model
    assert model.kind.model_dump() == expected


@pytest.mark.parametrize(
    ("text", "message", "hint"),
    [
        ("kind SCD_TYPE_2_BY_TIME (updated_at_name ts)", "needs unique_key", "unique_key <value>"),
        ("kind SCD_TYPE_2_BY_COLUMN (unique_key id)", "needs columns", "columns <value>"),
        ("kind SCD_TYPE_2_BY_COLUMN (unique_key (), columns *)", "unique_key lists no column", "unique_key id"),
        ("kind SCD_TYPE_2_BY_COLUMN (unique_key id, columns ())", "columns lists no column", "columns *"),
        ("kind SCD_TYPE_2_BY_COLUMN (unique_key id, columns *, updated_at_as_valid_from true)", "unknown property", "did you mean"),
        ("kind SCD_TYPE_2_BY_TIME (unique_key id, invalidate_hard_deletes maybe)", "expected true or false", "true or false"),
    ],
)
def test_scd_type_2_errors_point_at_the_property(text, message, hint):
    with pytest.raises(ProjectError) as caught:
        parse(f"MODEL (name db.m,\n  {text}); SELECT 1")
    assert message in str(caught.value)
    assert hint in (caught.value.hint or "")
    assert caught.value.line == 2


def test_time_data_type_and_batch_size_of_a_history_are_read_in_the_kinds_dialect():
    kind = parse("MODEL (name db.h, kind SCD_TYPE_2_BY_TIME (unique_key id, time_data_type date, batch_size 3));\n"
                 "SELECT 1 AS id, 1 AS updated_at").model.kind
    assert (kind.time_data_type, kind.batch_size) == ("DATE", 3)
    duckdb = parse("MODEL (name db.h, kind SCD_TYPE_2_BY_COLUMN (unique_key id, columns *, time_data_type timestamp),\n"
                   "  dialect duckdb); SELECT 1 AS id").model.kind
    assert duckdb.time_data_type == "TIMESTAMP_NTZ"  # DuckDB's TIMESTAMP has no time zone: Spark's TIMESTAMP_NTZ
    with pytest.raises(ProjectError) as caught:
        parse("MODEL (name db.h,\n  kind SCD_TYPE_2_BY_TIME (unique_key id, time_data_type INT)); SELECT 1 AS id")
    assert "time_data_type 'INT' is not a date or timestamp type" in caught.value.message and caught.value.line == 2


def test_scd_type_2_is_sqlmesh_alias_of_scd_type_2_by_time():
    alias = parse("MODEL (name db.m, kind SCD_TYPE_2 (unique_key id, updated_at_name changed_at)); SELECT 1 AS a").model
    full = parse("MODEL (name db.m, kind SCD_TYPE_2_BY_TIME (unique_key id, updated_at_name changed_at)); SELECT 1 AS a").model
    assert alias.kind.model_dump() == {**SCD_DEFAULTS, "name": "SCD_TYPE_2_BY_TIME", "updated_at_name": "changed_at",
                                       "updated_at_as_valid_from": False}
    assert alias == full  # same record, so the same fingerprint and physical table


def test_scd_type_2_alias_reads_only_the_by_time_properties():
    with pytest.raises(ProjectError) as caught:
        parse("MODEL (name db.m,\n  kind scd_type_2 (unique_key id, columns *)); SELECT 1")
    assert "unknown property 'columns' of kind SCD_TYPE_2_BY_TIME" in str(caught.value)
    assert caught.value.line == 2


def test_references_are_accepted_and_change_nothing_that_runs():
    """SQLMesh's join keys for its semantic layer (its ecommerce example writes them on every model)."""

    def model(header: str):
        text = f"MODEL (name silver.orders, kind FULL{header});\nSELECT 1 AS order_id"
        return parse_sql_model(Path("m.sql"), text, ModelDefaults(), {}).model

    with_references = model(",\n  references [bronze.raw_orders, customer_id]")
    assert with_references == model("")
    assert with_references.depends_on == frozenset()


@pytest.mark.parametrize(("written", "unit"), [("'hour'", "hour"), ("HALF_HOUR", "half_hour"), (None, None)])
def test_interval_unit_is_read_as_sqlmesh_writes_it(written, unit):
    prop = f",\n  interval_unit {written}" if written else ""
    parsed = parse(f"MODEL (name db.m, kind INCREMENTAL_BY_TIME_RANGE (time_column ds){prop}); SELECT 1 AS ds")
    assert parsed.model.interval_unit == unit
    defaulted = parse("MODEL (name db.m); SELECT 1 AS ds", defaults=ModelDefaults(interval_unit="day"))
    assert defaulted.model.interval_unit == "day"


@pytest.mark.parametrize(("written", "allowed"), [("true", True), ("TRUE", True), ("false", False), (None, False)])
def test_allow_partials_is_read_as_sqlmesh_writes_it(written, allowed):
    prop = f",\n  allow_partials {written}" if written else ""
    parsed = parse(f"MODEL (name db.m, kind INCREMENTAL_BY_TIME_RANGE (time_column ds){prop}); SELECT 1 AS ds")
    assert parsed.model.allow_partials is allowed
    defaulted = parse(f"MODEL (name db.m{prop}); SELECT 1 AS ds", defaults=ModelDefaults(allow_partials=True))
    assert defaulted.model.allow_partials is (written != "false")  # the header's own value wins over the default


@pytest.mark.parametrize(
    ("written", "default", "zone"),
    [("'America/Los_Angeles'", None, "America/Los_Angeles"), (None, "Asia/Tokyo", "Asia/Tokyo"),
     ("'UTC'", "Asia/Tokyo", None), (None, None, None)],
)
def test_cron_tz_is_read_as_sqlmesh_writes_it_and_utc_is_none(written, default, zone):
    prop = f",\n  cron_tz {written}" if written else ""
    parsed = parse(f"MODEL (name db.m{prop}); SELECT 1 AS ds", defaults=ModelDefaults(cron_tz=default))
    assert parsed.model.cron_tz == zone  # the header's UTC wins over the default's zone


def test_when_matched_and_merge_filter_are_read_as_sqlmesh_writes_them():
    parsed = parse(
        "MODEL (name db.m, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id, batch_concurrency 1,\n"
        "  when_matched (WHEN MATCHED AND Source.ts > Target.ts THEN UPDATE SET target.v = COALESCE(source.v, target.v)),\n"
        "  merge_filter target.ds > @start_ds AND source.v IS NOT NULL)); SELECT 1 AS id"
    )
    kind = parsed.model.kind
    assert kind.when_matched == "WHEN MATCHED AND source.ts > target.ts THEN UPDATE SET target.v = COALESCE(source.v, target.v)"
    # canonical Spark SQL, the macro kept (rendered per write), as a query is stored: formatting is no new version
    assert kind.merge_filter == "target.ds > __smv_start_ds AND NOT source.v IS NULL"
    reformatted = parse(
        "MODEL (name db.m, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id,\n"
        "  when_matched (when matched and SOURCE.TS >   target.ts then update set TARGET.V = coalesce(source.v, target.v)),\n"
        "  merge_filter TARGET.DS   >  @START_DS and SOURCE.V is not null)); SELECT 1 AS id"
    ).model.kind
    assert (reformatted.when_matched, reformatted.merge_filter) == (kind.when_matched, kind.merge_filter)
    range_kind = parse("MODEL (name db.r, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_concurrency 4)); SELECT 1 AS ds")
    assert range_kind.model.kind.batch_concurrency == 4


def test_merge_clauses_are_read_in_the_models_dialect_with_sqlmeshs_other_aliases():
    kind = parse(
        "MODEL (name db.m, dialect duckdb, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id,\n"
        "  when_matched (WHEN MATCHED AND __MERGE_SOURCE__.payload.flag THEN UPDATE SET target.v = source.v),\n"
        "  merge_filter target.day >= strftime(source.ts, '%Y-%m-%d'))); SELECT 1 AS id"
    ).model.kind
    assert kind.when_matched == "WHEN MATCHED AND source.payload.flag THEN UPDATE SET target.v = source.v"
    assert kind.merge_filter == "target.day >= DATE_FORMAT(source.ts, 'yyyy-MM-dd')"  # DuckDB's function, in Spark


def test_model_defaults_audits_come_before_the_models_own_and_enabled_is_the_default():
    defaults = ModelDefaults(audits=("not_null(columns := [id])", "unique_values(columns := (id))"), enabled=False)
    model = parse("MODEL (name db.m, audits (number_of_rows(threshold := 1))); SELECT 1 AS id", defaults=defaults).model
    assert [(call.name, call.args) for call in model.audits] == [
        ("not_null", (("columns", "(id)"),)), ("unique_values", (("columns", "(id)"),)),
        ("number_of_rows", (("threshold", "1"),)),
    ]
    assert model.enabled is False  # the project's default
    assert parse("MODEL (name db.m, enabled true); SELECT 1 AS id", defaults=defaults).model.enabled is True


def test_model_defaults_kind_is_the_kind_of_models_whose_header_names_none():
    defaults = ModelDefaults(kind="INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 3)")
    defaulted = parse("MODEL (name db.m); SELECT 1 AS ds", defaults=defaults).model.kind
    assert (defaulted.name, defaulted.time_column, defaulted.batch_size) == ("INCREMENTAL_BY_TIME_RANGE", "ds", 3)
    assert parse("MODEL (name db.v, kind VIEW); SELECT 1 AS ds", defaults=defaults).model.kind.name == "VIEW"
    assert parse("MODEL (name db.m); SELECT 1 AS ds").model.kind.name == "VIEW"  # SQLMesh's default
    with pytest.raises(ProjectError, match="model_defaults.kind 'INCREMENTAL_BY_TIME_RANGE'"):
        parse("MODEL (name db.m); SELECT 1 AS ds", defaults=ModelDefaults(kind="INCREMENTAL_BY_TIME_RANGE"))


def test_model_defaults_schema_change_policies_and_batch_concurrency_reach_the_kinds_that_take_them():
    # As SQLMesh 0.236.4 resolves the same files (checked against it): a kind's own value wins; the policies reach
    # every incremental kind, batch_concurrency only INCREMENTAL_BY_TIME_RANGE (a unique-key model runs one batch at
    # a time); FULL takes neither.
    defaults = ModelDefaults(on_destructive_change="allow", on_additive_change="warn", batch_concurrency=2)
    by_time = parse(
        "MODEL (name db.i, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, on_additive_change 'error')); SELECT 1 AS ds",
        defaults=defaults,
    ).model.kind
    assert (by_time.on_destructive_change, by_time.on_additive_change, by_time.batch_concurrency) == ("allow", "error", 2)
    by_key = parse("MODEL (name db.u, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id)); SELECT 1 AS id", defaults=defaults).model.kind
    assert (by_key.on_destructive_change, by_key.on_additive_change) == ("allow", "warn")
    assert "batch_concurrency" not in type(by_key).model_fields
    for kind in ("INCREMENTAL_BY_PARTITION", "INCREMENTAL_UNMANAGED"):
        header = f"MODEL (name db.p, kind {kind}, partitioned_by id); SELECT 1 AS id"
        assert parse(header, defaults=defaults).model.kind.on_destructive_change == "allow"
    full = parse("MODEL (name db.f, kind FULL); SELECT 1 AS id", defaults=defaults).model.kind
    assert full == parse("MODEL (name db.f, kind FULL); SELECT 1 AS id").model.kind
    plain = parse("MODEL (name db.i, kind INCREMENTAL_BY_TIME_RANGE (time_column ds)); SELECT 1 AS ds").model.kind
    assert (plain.on_destructive_change, plain.on_additive_change, plain.batch_concurrency) == ("error", "allow", None)


def test_sqlmesh_kind_properties_without_effect_here_load_and_a_kinds_dialect_reads_its_sql():
    plain = parse("MODEL (name db.i, kind INCREMENTAL_BY_TIME_RANGE (time_column ds)); SELECT 1 AS ds").model.kind
    spelled = parse("MODEL (name db.i, kind INCREMENTAL_BY_TIME_RANGE (time_column ds, dialect spark,\n"
                    "  partition_by_time_column false)); SELECT 1 AS ds").model.kind
    assert spelled == plain  # SQLMesh's partitioning choice; a time-range table here is always a period table
    by_column = "MODEL (name db.h, kind SCD_TYPE_2_BY_COLUMN (unique_key id, columns [x]{})); SELECT 1 AS id, 1 AS x"
    assert parse(by_column.format(", updated_at_name changed")).model.kind == parse(by_column.format("")).model.kind
    # The kind's dialect is the one its SQL properties are written in: DuckDB's `//` is integer division.
    keyed = parse("MODEL (name db.u, kind INCREMENTAL_BY_UNIQUE_KEY (unique_key id, dialect duckdb,\n"
                  "  merge_filter source.x // 2 > 0)); SELECT 1 AS id, 1 AS x").model.kind
    assert keyed.merge_filter == "source.x DIV 2 > 0"  # (read as Spark SQL, `//` would start a comment)
    with pytest.raises(ProjectError) as caught:
        parse("MODEL (name db.i,\n  kind INCREMENTAL_BY_TIME_RANGE (time_column ds, dialect sparky)); SELECT 1 AS ds")
    assert "unknown dialect 'sparky'" in caught.value.message and caught.value.line == 2
    with pytest.raises(ProjectError, match="unknown property 'dialect' of kind FULL"):
        parse("MODEL (name db.f, kind FULL (dialect spark)); SELECT 1 AS id")


def test_a_unit_longer_than_the_cron_loads_with_allow_partials():
    parsed = parse("MODEL (name db.m, cron '@hourly', interval_unit day, allow_partials true); SELECT 1 AS ds")
    assert (parsed.model.interval_unit, parsed.model.allow_partials) == ("day", True)


@pytest.mark.parametrize(
    "prop",
    ["gateway local", "project 'shop'", "virtual_environment_mode dev_only", "physical_version '1'",
     "virtual_properties (creatable_type = SECURE)"],
)
def test_sqlmesh_placement_properties_load_without_effect_as_for_python_models(prop):
    plain = parse("MODEL (name db.m, kind FULL); SELECT 1 AS id").model
    placed = parse(f"MODEL (name db.m, kind FULL,\n  {prop}); SELECT 1 AS id").model
    assert placed.model_dump(exclude={"line"}) == plain.model_dump(exclude={"line"})


def test_an_audit_argument_name_may_be_quoted_as_dbt_converted_projects_write_it():
    model = parse("MODEL (name db.m, dialect duckdb, audits (ACCEPTED_VALUES(\"column\" = status, is_in = ['a', 'b'])));"
                  " SELECT 'a' AS status").model
    assert model.audits == (AuditCall(name="accepted_values", args=(("column", "status"), ("is_in", "('a', 'b')"))),)


def test_a_list_property_may_be_spelled_as_an_array():
    # SQLMesh reads a property's value as SQL, so ARRAY[...] is the list it spells (a user's every model wrote
    # `grain ARRAY[order_id, customer_id]` and `audits ARRAY[...]`; the project did not load).
    model = parse(
        "MODEL (name s.m, kind FULL, grain ARRAY[id, ds], audits array[not_null(columns := [id])], tags ARRAY ('a', 'b'));\n"
        "SELECT 1 AS id, DATE '2024-01-01' AS ds\n"
    ).model
    assert (model.grains, model.tags) == (("id", "ds"), ("a", "b"))
    assert model.audits == (AuditCall(name="not_null", args=(("columns", "(id)"),)),)
