"""Rendering a model's query for an interval: golden cases from fixtures/rendering.sql, plus the errors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.kinds import EmbeddedKind, FullKind, IncrementalByTimeRangeKind, SeedKind
from dagster_sparkmesh.model.records import Model
from dagster_sparkmesh.project.rendering import (
    physical_tables,
    render_query,
    render_statements,
    time_macro_values,
)

FIXTURES = Path(__file__).parent / "fixtures" / "rendering.sql"
VARIABLES = {"min_amount": 10, "region": "eu"}


def _model(name: str, kind, query: str | None = None, fingerprint: str = "", source: str = "sql") -> Model:
    return Model(name=name, kind=kind, source=source, path=Path(f"models/{name}.sql"), query=query, fingerprint=fingerprint)


MODELS = {
    "shop.orders": _model("shop.orders", FullKind(), "SELECT 1 AS id", "a" * 64),
    "shop.daily": _model("shop.daily", IncrementalByTimeRangeKind(time_column="ds"), "SELECT 1 AS ds", "b" * 64),
    "shop.items": _model("shop.items", EmbeddedKind(), "SELECT item_id, price FROM shop.orders WHERE ds <= @end_ds"),
}


def _version(model: Model) -> str:
    return model.fingerprint[:12]


TABLE_FOR = physical_tables(MODELS, ["raw.events"], _version)


@dataclass(frozen=True)
class Case:
    title: str
    model: str
    start: datetime
    end: datetime
    execution_time: datetime
    query: str
    expected: str


def _directive(block: str, key: str, default: str | None = None) -> str:
    match = re.search(rf"^-- {key}: (.+)$", block, re.MULTILINE)
    if match is None:
        if default is None:
            raise AssertionError(f"fixture case without '-- {key}:'\n{block}")
        return default
    return match.group(1).strip()


def _code(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("--"))


def load_cases() -> list[Case]:
    blocks = re.split(r"^(?=-- title: )", FIXTURES.read_text(), flags=re.MULTILINE)[1:]
    cases = []
    for block in blocks:
        query, expected = block.split("-- expected:\n")
        start, end = (datetime.fromisoformat(part.strip()) for part in _directive(block, "interval").split("/"))
        cases.append(
            Case(
                title=_directive(block, "title"),
                model=_directive(block, "model"),
                start=start,
                end=end,
                execution_time=datetime.fromisoformat(_directive(block, "execution_time", "2024-02-01")),
                query=_code(query),
                expected=_code(expected),
            )
        )
    return cases


CASES = load_cases()


def test_fixture_file_has_cases():
    assert len(CASES) >= 15


@pytest.mark.parametrize("case", CASES, ids=[case.title for case in CASES])
def test_golden(case: Case):
    model = MODELS[case.model].model_copy(update={"query": case.query})
    rendered = render_query(
        model,
        start=case.start,
        end=case.end,
        execution_time=case.execution_time,
        table_for=TABLE_FOR,
        models=MODELS,
        variables=VARIABLES,
    )
    assert rendered == case.expected


def _render(model: Model, **overrides) -> str:
    arguments = dict(
        start=datetime(2024, 1, 1),
        end=datetime(2024, 1, 2),
        execution_time=datetime(2024, 1, 3),
        table_for=TABLE_FOR,
        models=MODELS,
    )
    arguments.update(overrides)
    return render_query(model, **arguments)


def test_a_mapping_works_as_table_for():
    model = MODELS["shop.daily"].model_copy(update={"query": "SELECT * FROM shop.orders JOIN @this_model"})
    rendered = _render(model, table_for={"shop.orders": "phys.orders_1", "shop.daily": "phys.daily_1"}, models=None)
    assert rendered == "SELECT * FROM `phys`.`orders_1` AS orders JOIN `phys`.`daily_1` ON TRUE"


def test_a_model_named_after_a_spark_keyword_keeps_its_name_as_a_quoted_alias():
    # A user's `core.full`: `FROM <table> AS full` is a syntax error in Spark (FULL starts a join).
    model = MODELS["shop.daily"].model_copy(update={"query": "SELECT COUNT(id) AS total FROM shop.full JOIN shop.orders"})
    rendered = _render(model, table_for={"shop.full": "phys.full_1", "shop.orders": "phys.orders_1"}, models=None)
    assert rendered == "SELECT COUNT(id) AS total FROM `phys`.`full_1` AS `full` JOIN `phys`.`orders_1` AS orders ON TRUE"


def test_aware_datetimes_are_converted_to_utc():
    model = MODELS["shop.daily"].model_copy(update={"query": "SELECT @start_ts AS s"})
    paris = timezone(timedelta(hours=1))
    rendered = _render(model, start=datetime(2024, 1, 1, 1, tzinfo=paris), end=datetime(2024, 1, 2, tzinfo=timezone.utc))
    assert rendered == "SELECT '2024-01-01 00:00:00' AS s"


def test_time_macro_values_cover_every_builtin_time_macro():
    from dagster_sparkmesh.project.macros import TIME_MACROS

    values = time_macro_values(datetime(2024, 1, 1), datetime(2024, 1, 2), datetime(2024, 1, 2))
    assert TIME_MACROS <= values.keys()


def test_statements_render_tables_without_aliases():
    model = MODELS["shop.daily"]
    rendered = render_statements(
        model,
        ["CACHE TABLE shop.orders", "ANALYZE TABLE @this_model COMPUTE STATISTICS", "SET spark.x = @start_ds"],
        start=datetime(2024, 1, 1),
        end=datetime(2024, 1, 2),
        execution_time=datetime(2024, 1, 2),
        table_for=TABLE_FOR,
    )
    assert rendered == [
        "CACHE TABLE `sparkmesh__shop`.`shop__orders__aaaaaaaaaaaa`",
        "ANALYZE TABLE `sparkmesh__shop`.`shop__daily__bbbbbbbbbbbb` COMPUTE STATISTICS",
        "SET spark.x = '2024-01-01'",
    ]


def test_statement_kept_as_raw_text_with_a_macro_is_refused():
    with pytest.raises(ProjectError, match="cannot substitute") as error:
        render_statements(
            MODELS["shop.daily"],
            ["ADD JAR @start_ds"],
            start=datetime(2024, 1, 1),
            end=datetime(2024, 1, 2),
            execution_time=datetime(2024, 1, 2),
            table_for=TABLE_FOR,
        )
    assert "ADD JAR @start_ds" in str(error.value)


@pytest.mark.parametrize(
    ("query", "overrides", "message"),
    [
        ("SELECT @nope AS x", {}, "unknown macro variable @nope"),
        ("SELECT @start_ds AS x", {"end": datetime(2024, 1, 1)}, "empty interval"),
        ("SELECT * FROM shop.orders", {"table_for": {"shop.daily": "p.d"}}, "has no table to read"),
        ("SELECT * FROM shop.orders WHERE", {}, "cannot parse the SQL of model shop.daily"),
    ],
)
def test_user_errors_name_the_model_file(query, overrides, message):
    model = MODELS["shop.daily"].model_copy(update={"query": query})
    with pytest.raises(ProjectError, match=message) as error:
        _render(model, **overrides)
    assert "models/shop.daily.sql" in str(error.value)


def test_this_model_in_an_embedded_model_is_an_error():
    embedded = MODELS["shop.items"].model_copy(update={"query": "SELECT * FROM @this_model"})
    models = {**MODELS, "shop.items": embedded}
    reader = MODELS["shop.daily"].model_copy(update={"query": "SELECT * FROM shop.items"})
    with pytest.raises(ProjectError, match="@this_model has no table"):
        _render(reader, models=models, table_for=physical_tables(models, (), _version))


def test_embedded_cycle_is_reported():
    models = {
        **MODELS,
        "shop.items": MODELS["shop.items"].model_copy(update={"query": "SELECT * FROM shop.more"}),
        "shop.more": _model("shop.more", EmbeddedKind(), "SELECT * FROM shop.items"),
    }
    reader = MODELS["shop.daily"].model_copy(update={"query": "SELECT * FROM shop.items"})
    with pytest.raises(ProjectError, match="shop.items -> shop.more -> shop.items"):
        _render(reader, models=models, table_for=physical_tables(models, (), _version))


def test_a_model_without_query_cannot_be_rendered():
    seed = _model("raw.seed", SeedKind(path="x.csv"), None, "c" * 64, source="seed")
    with pytest.raises(ProjectError, match="no SQL query"):
        _render(seed)
