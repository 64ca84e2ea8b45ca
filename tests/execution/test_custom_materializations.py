"""CUSTOM kinds on Spark: the materialization class a model names writes each batch through the Spark adapter, from
the project's materializations/ folder or an installed package's entry point, as SQLMesh finds them."""

import textwrap
from datetime import datetime

import pytest

from dagster_sparkmesh.errors import ExecutionError, ProjectError
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.snapshot.naming import physical_table
from dagster_sparkmesh.snapshot.records import Interval

# Replaces the table with the batch's rows; keeps a log of every call in a table of its own.
REPLACING = '''
from sqlmesh import CustomMaterialization, CustomKind
from sqlmesh.core.node import IntervalUnit
from sqlmesh.utils.pydantic import validate_string


class TaggedKind(CustomKind):
    @property
    def tag(self):
        return validate_string(self.materialization_properties.get("tag"))


class Replacing(CustomMaterialization[TaggedKind]):
    NAME = "replacing"

    def insert(self, table_name, query_or_df, model, is_first_insert, render_kwargs, **kwargs):
        assert type(model.kind).__name__ == "TaggedKind"
        assert model.interval_unit is IntervalUnit.DAY, model.interval_unit  # inferred from @daily, as in SQLMesh
        self._replace_query_for_model(model, table_name, query_or_df, render_kwargs)
        calls = table_name.rsplit(".", 1)[0] + ".calls"  # next to the model's table
        self.adapter.execute(f"CREATE TABLE IF NOT EXISTS {calls} (tag STRING, first BOOLEAN, start_day STRING) USING parquet")
        day = render_kwargs["start"].strftime("%Y-%m-%d")
        self.adapter.execute(f"INSERT INTO {calls} VALUES ('{model.kind.tag}', {str(is_first_insert).lower()}, '{day}')")
'''

APPENDING = '''
from sqlmesh import CustomMaterialization


class Appending(CustomMaterialization):
    NAME = "Appending"

    def insert(self, table_name, query_or_df, model, is_first_insert, render_kwargs, **kwargs):
        if is_first_insert and self.adapter.table_exists(table_name):
            self.adapter.drop_table(table_name)
        self.append(table_name, query_or_df, model, render_kwargs)
'''

LATEST = """
MODEL (
  name shop.latest_ids,
  kind CUSTOM (materialization 'replacing', materialization_properties (tag = 'nightly')),
  columns (id INT, ds DATE)
);

SELECT id, ds FROM raw.events WHERE ds BETWEEN @start_ds AND @end_ds
"""
LOG = """
MODEL (name shop.id_log, kind CUSTOM (materialization 'appending', batch_size 1));

SELECT ds, id FROM raw.events WHERE ds BETWEEN @start_ds AND @end_ds
"""


def _write(project, files):
    for relative, text in files.items():
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def _run(make_context, project, end):
    ctx = make_context(project)
    plan = plan_for(ctx, None, end)
    apply_plan(ctx, plan)
    return ctx, plan


def _rows(spark, sql):
    return [tuple(r) for r in spark.sql(sql).collect()]


def test_a_class_of_the_project_writes_each_batch_with_its_kind_and_properties(spark, mini_project, make_context):
    _write(mini_project, {"materializations/replacing.py": REPLACING, "models/latest_ids.sql": LATEST})
    _run(make_context, mini_project, datetime(2024, 1, 3))
    ctx, plan = _run(make_context, mini_project, datetime(2024, 1, 5))
    # The second run's one batch (01-03..01-04) replaced the table: only its days are left.
    days = _rows(spark, "SELECT DISTINCT CAST(ds AS STRING) FROM shop.latest_ids ORDER BY 1")
    assert days == [("2024-01-03",), ("2024-01-04",)]
    version = plan.version_of("shop.latest_ids")
    calls = physical_table("shop.latest_ids", version).rsplit(".", 1)[0] + ".calls"
    assert _rows(spark, f"SELECT tag, first, start_day FROM {calls} ORDER BY start_day") == [
        ("nightly", True, "2024-01-01"), ("nightly", False, "2024-01-03"),
    ]  # fmt: skip
    assert ctx.state.get_intervals("shop.latest_ids", version) == [Interval(start=datetime(2024, 1, 1), end=datetime(2024, 1, 5))]
    spark.sql(f"DROP TABLE {calls}")


def test_batch_size_calls_insert_per_batch_and_append_keeps_every_day_once(spark, mini_project, make_context):
    _write(mini_project, {"materializations/appending.py": APPENDING, "models/id_log.sql": LOG})
    _run(make_context, mini_project, datetime(2024, 1, 3))
    _run(make_context, mini_project, datetime(2024, 1, 5))
    counts = _rows(spark, "SELECT CAST(ds AS STRING), COUNT(*) FROM shop.id_log GROUP BY ds ORDER BY 1")
    assert counts == [("2024-01-01", 3), ("2024-01-02", 3), ("2024-01-03", 3), ("2024-01-04", 3)]


def test_editing_the_class_re_versions_its_models(mini_project):
    _write(mini_project, {"materializations/replacing.py": REPLACING, "models/latest_ids.sql": LATEST})
    file = mini_project / "materializations" / "replacing.py"
    before = load_project(mini_project).models["shop.latest_ids"].fingerprint
    file.write_text(REPLACING + "\n# a comment only\n")
    assert load_project(mini_project).models["shop.latest_ids"].fingerprint == before
    file.write_text(REPLACING.replace("self._replace_query_for_model(", "self.append("))
    assert load_project(mini_project).models["shop.latest_ids"].fingerprint != before


def test_an_installed_package_entry_point_provides_a_class(spark, mini_project, make_context, tmp_path, monkeypatch):
    site = tmp_path / "site"
    _write(site, {
        "shop_materializations/__init__.py": APPENDING,
        "shop_materializations-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: shop-materializations\nVersion: 1.0\n",
        "shop_materializations-1.0.dist-info/entry_points.txt": "[sqlmesh.materializations]\nappending = shop_materializations:Appending\n",
    })  # fmt: skip
    monkeypatch.syspath_prepend(str(site))
    _write(mini_project, {"models/id_log.sql": LOG})
    _run(make_context, mini_project, datetime(2024, 1, 3))
    assert _rows(spark, "SELECT COUNT(*) FROM shop.id_log") == [(6,)]


def test_an_unknown_materialization_is_a_load_error_at_the_model(mini_project):
    _write(mini_project, {"models/id_log.sql": LOG.replace("'appending'", "'apending'")})
    with pytest.raises(ProjectError) as raised:
        load_project(mini_project)
    assert "model shop.id_log uses custom materialization 'apending', which no class defines" in str(raised.value)
    assert str(raised.value.path).endswith("id_log.sql") and raised.value.line == 2


def test_a_class_that_raises_fails_the_model_with_its_message(spark, mini_project, make_context):
    failing = APPENDING.replace("        if is_first_insert", "        raise ValueError('no warehouse today')\n        if is_first_insert")
    _write(mini_project, {"materializations/appending.py": failing, "models/id_log.sql": LOG})
    with pytest.raises(ExecutionError, match=r"custom materialization 'appending' of model shop.id_log raised ValueError: no warehouse today"):
        _run(make_context, mini_project, datetime(2024, 1, 3))


def test_an_adapter_method_spark_lacks_is_refused_by_name(spark, mini_project, make_context):
    merging = APPENDING.replace("        if is_first_insert", "        self.adapter.merge(table_name, query_or_df)\n        if is_first_insert")
    _write(mini_project, {"materializations/appending.py": merging, "models/id_log.sql": LOG})
    with pytest.raises(ExecutionError, match=r"adapter\.merge, which sparkmesh's Spark adapter does not provide"):
        _run(make_context, mini_project, datetime(2024, 1, 3))


PYTHON_LOG = """
from sqlmesh import model


@model(
    "shop.py_log",
    kind=dict(name="CUSTOM", materialization="appending", materialization_properties={"tag": "py"}, batch_size=1),
    columns={"ds": "date", "id": "int"},
    depends_on=["raw.events"],
)
def execute(context, start, end, **kwargs):
    table = context.resolve_table("raw.events")
    return context.spark.sql(f"SELECT ds, id FROM {table} WHERE ds >= DATE'{start:%Y-%m-%d}' AND ds <= DATE'{end:%Y-%m-%d}'")
"""


def test_a_python_model_with_a_custom_kind_hands_its_rows_to_the_class(spark, mini_project, make_context):
    _write(mini_project, {"materializations/appending.py": APPENDING, "models/py_log.py": PYTHON_LOG})
    kind = load_project(mini_project).models["shop.py_log"].kind
    assert (kind.materialization, kind.properties(), kind.batch_size) == ("appending", {"tag": "py"}, 1)
    _run(make_context, mini_project, datetime(2024, 1, 3))
    counts = _rows(spark, "SELECT CAST(ds AS STRING), COUNT(*) FROM shop.py_log GROUP BY ds ORDER BY 1")
    assert counts == [("2024-01-01", 3), ("2024-01-02", 3)]


def test_a_class_without_insert_fails_the_model_saying_so(spark, mini_project, make_context):
    lazy = "from sqlmesh import CustomMaterialization\n\n\nclass Lazy(CustomMaterialization):\n    NAME = 'appending'\n"
    _write(mini_project, {"materializations/appending.py": lazy, "models/id_log.sql": LOG})
    with pytest.raises(ExecutionError, match=r"raised NotImplementedError: custom materialization Lazy must implement insert\(\)"):
        _run(make_context, mini_project, datetime(2024, 1, 3))
