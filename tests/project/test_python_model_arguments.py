"""@model arguments as SQLMesh documents them, and a clear error (file, line, argument) for each wrong type."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.kinds import FullKind, IncrementalByTimeRangeKind, IncrementalByUniqueKeyKind
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.python.models import load_python_model

DEFAULTS = ModelDefaults(start="2024-01-01")
HEADER = "from sqlmesh import model\nfrom sqlmesh.core.model.kind import *\nNAME = 'db.parent'\n\n"
BODY = "def execute(context, start, end, execution_time, **kwargs):\n    {body}\n"


def _load(tmp_path: Path, arguments: str, body: str = "return None", defaults: ModelDefaults = DEFAULTS):
    path = tmp_path / "models" / "m.py"
    path.parent.mkdir(exist_ok=True)
    path.write_text(HEADER + f'@model("db.m", {arguments})\n' + BODY.format(body=body))
    return load_python_model(path, defaults)


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [
        ('kind="full"', FullKind()),
        ("kind=FullKind()", FullKind()),
        ("kind=dict(name=ModelKindName.INCREMENTAL_BY_TIME_RANGE, time_column='ds')", IncrementalByTimeRangeKind(time_column="ds")),
        ("kind=IncrementalByUniqueKeyKind(unique_key='id')", IncrementalByUniqueKeyKind(unique_key=("id",))),
        ("kind={'name': 'INCREMENTAL_BY_UNIQUE_KEY', 'unique_key': ['a', 'b']}", IncrementalByUniqueKeyKind(unique_key=("a", "b"))),
    ],
)
def test_kind_spellings(tmp_path: Path, arguments: str, kind: object) -> None:
    assert _load(tmp_path, arguments).kind == kind


def test_sqlmesh_arguments(tmp_path: Path) -> None:
    loaded = _load(
        tmp_path,
        "grain='id AS order_id', tags=['a'], references=['x'], column_descriptions={'id': 'the id'}, enabled='true', "
        "start='2024-02-03', end='2024-03-01 05:00:00', pre_statements=['SET x = 1'], session_properties={'a': 1}, "
        "dialect='duckdb', columns={'id': 'text'}, interval_unit='HOUR', allow_partials=True",
    )
    assert loaded.interval_unit == "hour" and loaded.allow_partials is True
    assert (loaded.grains, loaded.tags, loaded.enabled) == (("order_id",), ("a",), True)
    assert loaded.column_descriptions == (("id", "the id"),)
    assert (loaded.start, loaded.end) == ("2024-02-03", "2024-03-01 05:00:00")
    assert loaded.pre_statements == ("SET x = 1",) and loaded.columns == (("id", "STRING"),)


def test_columns_may_be_sqlglot_types(tmp_path: Path) -> None:
    loaded = _load(tmp_path, "columns={'id': __import__('sqlglot').exp.DataType.build('bigint'), 'd': 'decimal(10, 2)'}")
    assert loaded.columns == (("id", "BIGINT"), ("d", "DECIMAL(10, 2)"))


def test_relative_start_is_read_as_a_day(tmp_path: Path) -> None:
    from datetime import date, timedelta

    assert _load(tmp_path, "start='1 week ago'").start == (datetime.now(timezone.utc).date() - timedelta(days=7)).isoformat()
    assert date.fromisoformat(_load(tmp_path, "start='yesterday'").start or "")


def test_dependencies_are_inferred_from_the_context(tmp_path: Path) -> None:
    body = "context.resolve_table('db.a')\n    context.table(NAME)\n    context.table(f'{NAME}_2')\n    return None"
    assert _load(tmp_path, "kind='FULL'", body).depends_on == frozenset({"db.a", "db.parent", "db.parent_2"})


def test_a_model_reading_itself_keeps_its_name_for_the_loader(tmp_path: Path) -> None:
    """The file reads itself and db.a; the loader turns its own name into ``depends_on_self`` (test_dag.py)."""
    body = "context.table('db.m')\n    context.table('db.a')\n    return None"
    assert _load(tmp_path, "kind='FULL'", body).depends_on == frozenset({"db.a", "db.m"})


def test_declared_dependencies_take_precedence_as_in_sqlmesh(tmp_path: Path) -> None:
    body = "context.table(kwargs['x'])\n    return None"
    assert _load(tmp_path, "depends_on=['db.declared']", body).depends_on == frozenset({"db.declared"})


def test_description_shows_the_users_source(tmp_path: Path) -> None:
    loaded = _load(tmp_path, "kind='FULL'")
    assert loaded.python_code.startswith("from sqlmesh import model") and "Module(" not in loaded.python_code
    assert loaded.python_source.startswith("Module(")


@pytest.mark.parametrize(
    ("arguments", "body", "message"),
    [
        ("kind=None", "return None", "@model kind of db.m: kind=None is not a kind"),
        ("kind=['FULL']", "return None", "expected a kind name, a dict or a kind object, not list"),
        ("kind=dict(time_column='ds')", "return None", "the kind has no name"),
        ("kind='MANAGED'", "return None", "kind MANAGED is not supported by sparkmesh"),
        ("kind=ViewKind()", "return None", "kind VIEW is not supported by a Python model that returns DataFrames"),
        ("columns=['id']", "return None", "@model columns of db.m: expected a dict"),
        ("columns={'id': 'no_such_type'}", "return None", "column type 'no_such_type'"),
        ("tags='a,b'.split(',') + [1]", "return None", "@model tags of db.m: expected a list of strings"),
        ("enabled='maybe'", "return None", "@model enabled of db.m"),
        ("column_descriptions=['id']", "return None", "@model column_descriptions of db.m: expected a dict"),
        ("depends_on='db.a'", "return None", "depends_on must be a list of table names"),
        ("start='next blue moon'", "return None", "@model start of db.m"),
        ("owner=1", "return None", "@model owner of db.m: expected a string"),
        ("interval_unit='fortnight'", "return None", "unknown interval_unit 'fortnight'"),
        ("allow_partials='yes'", "return None", "@model allow_partials of db.m: expected True or False"),
        ("kind=IncrementalByTimeRangeKind(time_column='ds', auto_restatement_cron='every sunday')", "return None",
         "invalid cron 'every sunday'"),
        ("kind=IncrementalByTimeRangeKind(time_column='ds', auto_restatement_intervals=0)", "return None",
         "greater than 0"),
        ("cron_tz='Atlantis/Capital'", "return None", "@model cron_tz of db.m: unknown cron_tz 'Atlantis/Capital'"),
        ("cron='@hourly', interval_unit='day'", "return None", "ticks more often than the interval unit 'day'"),
        ("kind='FULL'", "for name in ['db.a']:\n        context.table(name)", "cannot tell which table"),
    ],
)
def test_wrong_arguments_are_clear_errors(tmp_path: Path, arguments: str, body: str, message: str) -> None:
    with pytest.raises(ProjectError) as error:
        _load(tmp_path, arguments, body)
    assert message in str(error.value)
    assert error.value.path == tmp_path / "models" / "m.py" and error.value.line is not None


def test_missing_module_hint_names_the_project_root(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="put the module in the project folder"):
        _load(tmp_path, "kind='FULL'", "return None\nimport no_such_helper_module")


def test_blueprints_make_one_model_each(tmp_path: Path) -> None:
    from dagster_sparkmesh.project.python.models import load_python_models

    path = tmp_path / "models" / "m.py"
    path.parent.mkdir()
    path.write_text(HEADER + '@model("@{customer}.orders", kind="FULL", description="for @customer",\n'
                    '       blueprints=[{"customer": "acme", "limit": 1}, {"Customer": "globex", "limit": 2}])\n'
                    + BODY.format(body="return None"))
    first, second = load_python_models(path, DEFAULTS)

    assert (first.name, second.name) == ("acme.orders", "globex.orders")
    assert first.description == "for acme" and first.blueprint_variables == (("customer", '"acme"'), ("limit", "1"))
    assert first.python_source != second.python_source  # a blueprint's values are part of its model's hash


def test_a_models_file_may_declare_none_or_several(tmp_path: Path) -> None:
    from dagster_sparkmesh.project.python.models import load_python_models

    path = tmp_path / "models" / "m.py"
    path.parent.mkdir()
    path.write_text(HEADER + "X = 1\n")
    assert load_python_models(path, DEFAULTS) == []
    path.write_text(HEADER + '@model("db.a")\n' + BODY.format(body="return None") + '@model("db.b")\n' + BODY.replace("execute", "other").format(body="return None"))
    assert [model.name for model in load_python_models(path, DEFAULTS)] == ["db.a", "db.b"]


@pytest.mark.parametrize("value", ["acme", [], ["acme"], [{1: "a"}]])
def test_wrong_blueprints_are_clear_errors(tmp_path: Path, value: object) -> None:
    with pytest.raises(ProjectError, match="@model blueprints of"):
        _load(tmp_path, f"blueprints={value!r}")


def test_is_sql_models_are_sql_models_whose_query_a_function_wrote(tmp_path: Path) -> None:
    from dagster_sparkmesh.project.python.models import load_python_models

    (tmp_path / "config.yaml").write_text("variables:\n  min_id: 3\n")
    path = tmp_path / "models" / "m.py"
    path.parent.mkdir()
    path.write_text(
        "from sqlglot import exp\nfrom sqlmesh import model\nfrom sqlmesh.core.macros import MacroEvaluator\n\n\n"
        "@model('db.@{part}', is_sql=True, kind='FULL', depends_on=['db.extra'], blueprints=[{'part': 'a'}])\n"
        "def entrypoint(evaluator: MacroEvaluator) -> str:\n"
        "    return f\"SELECT id FROM db.src_{evaluator.blueprint_var('part')} WHERE id > {evaluator.var('min_id')}"
        " AND ds BETWEEN @start_ds AND @end_ds\"\n"
    )
    (loaded,) = load_python_models(path, DEFAULTS, tmp_path)

    assert loaded.source == "sql" and loaded.name == "db.a" and loaded.python_entrypoint is None
    assert loaded.query is not None and "FROM db.src_a WHERE id > 3" in loaded.query and "@start_ds" in loaded.query
    assert loaded.depends_on == frozenset({"db.src_a", "db.extra"})


def test_an_is_sql_model_may_be_embedded_or_a_view(tmp_path: Path) -> None:
    path = tmp_path / "models" / "m.py"
    path.parent.mkdir()
    path.write_text("from sqlmesh import model\nfrom sqlmesh.core.model import EmbeddedKind\n\n\n"
                    "@model('db.m', is_sql=True, kind=EmbeddedKind())\ndef entrypoint(evaluator):\n"
                    "    assert evaluator.runtime_stage == 'loading'\n    return 'SELECT 1 AS x'\n")
    assert load_python_model(path, DEFAULTS, tmp_path).kind.name == "EMBEDDED"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("return 1", "must return SQL text or a sqlglot expression, not int"),
        ("return evaluator.get_snapshot('x')", "evaluator.get_snapshot is not available"),
        ("return evaluator.columns_to_types('db.x')", "columns_to_types reads the other models: load the project"),
        ("return 'SELEC oops FROM'", "m.py"),
    ],
)
def test_is_sql_errors_name_the_model(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(ProjectError, match=message):
        path = tmp_path / "models" / "m.py"
        path.parent.mkdir()
        path.write_text(f"from sqlmesh import model\n\n\n@model('db.m', is_sql=True)\ndef entrypoint(evaluator):\n    {body}\n")
        from dagster_sparkmesh.project.python.models import load_python_models

        load_python_models(path, DEFAULTS, tmp_path)


def test_audit_arguments_convert_as_in_sqlmesh(tmp_path: Path) -> None:
    loaded = _load(tmp_path, "audits=[('accepted_values', {'column': __import__('sqlglot').exp.column('name'), "
                             "'is_in': ['Hamachi Toro', 'Uni']}), ('number_of_rows', {'threshold': 1}), 'not_null(columns := (id))']")
    assert [(call.name, call.args) for call in loaded.audits] == [
        ("accepted_values", (("column", "name"), ("is_in", "('Hamachi Toro', 'Uni')"))),
        ("number_of_rows", (("threshold", "1"),)),
        ("not_null", (("columns", "(id)"),)),
    ]


def test_when_matched_and_merge_filter_are_read_from_the_kind(tmp_path: Path) -> None:
    loaded = _load(tmp_path, "kind=dict(name='INCREMENTAL_BY_UNIQUE_KEY', unique_key=['id'], "
                             "when_matched='WHEN MATCHED THEN UPDATE SET target.v = source.v', merge_filter='target.v > 0')")
    assert (loaded.kind.when_matched, loaded.kind.merge_filter) == (
        "WHEN MATCHED THEN UPDATE SET target.v = source.v", "target.v > 0")
    with pytest.raises(ProjectError, match="names neither source nor target"):
        _load(tmp_path, "kind=dict(name='INCREMENTAL_BY_UNIQUE_KEY', unique_key=['id'], merge_filter='v > 0')")
    one_at_a_time = _load(tmp_path, "kind=dict(name='INCREMENTAL_BY_UNIQUE_KEY', unique_key=['id'], batch_concurrency=1)")
    assert one_at_a_time.kind.unique_key == ("id",)  # SQLMesh's only value, as in a SQL header
    with pytest.raises(ProjectError, match="greater than 0"):
        _load(tmp_path, "kind=dict(name='INCREMENTAL_BY_TIME_RANGE', time_column='ds', batch_concurrency=0)")
    unset = _load(tmp_path, "kind=dict(name='INCREMENTAL_BY_TIME_RANGE', time_column='ds', auto_restatement_cron=None)")
    assert unset.kind.time_column == "ds"


def test_model_defaults_audits_and_enabled_reach_python_models(tmp_path: Path) -> None:
    defaults = ModelDefaults(audits=("not_null(columns := [id])",), enabled=False)
    loaded = _load(tmp_path, "audits=['number_of_rows(threshold := 1)']", defaults=defaults)
    assert [call.name for call in loaded.audits] == ["not_null", "number_of_rows"] and loaded.enabled is False


def test_cron_tz_is_read_and_utc_is_none(tmp_path: Path) -> None:
    assert _load(tmp_path, "cron_tz='America/Chicago'").cron_tz == "America/Chicago"
    assert _load(tmp_path, "cron_tz='UTC'").cron_tz is None


def test_allow_partials_may_be_text_as_in_sqlmesh(tmp_path: Path) -> None:
    assert _load(tmp_path, "allow_partials='true'").allow_partials is True


def test_interval_unit_may_be_sqlmeshs_enum(tmp_path: Path) -> None:
    loaded = _load(tmp_path, "interval_unit=__import__('sqlmesh.core.node', fromlist=['IntervalUnit']).IntervalUnit.HALF_HOUR")
    assert loaded.interval_unit == "half_hour"
