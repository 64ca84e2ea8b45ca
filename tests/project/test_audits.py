from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.builtin_audits import BUILTIN_AUDITS, render_audit_query
from dagster_sparkmesh.model.records import AuditCall, AuditDefinition
from dagster_sparkmesh.project.checks.audits import load_audits
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.sql.header import read_audit_call

FIXTURE = Path(__file__).parent / "fixtures" / "other_project"
TABLE = "`db`.`t`"

# Golden renderings of every built-in audit: (call, expected Spark SQL).
GOLDEN = [
    (AuditCall(name="not_null", args=(("columns", "(id, ds)"),)), "SELECT * FROM `db`.`t` WHERE id IS NULL OR ds IS NULL"),
    (AuditCall(name="not_null_non_blocking", args=(("columns", "ARRAY(id)"),)), "SELECT * FROM `db`.`t` WHERE id IS NULL"),
    (
        AuditCall(name="unique_values", args=(("columns", "(id)"),)),
        "SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY id ORDER BY id NULLS LAST) AS _sparkmesh_rank_0 "
        "FROM `db`.`t`) AS _sparkmesh_ranked WHERE _sparkmesh_rank_0 > 1",
    ),
    (
        AuditCall(name="accepted_values", args=(("column", "status"), ("is_in", "('new', 'done')"))),
        "SELECT * FROM `db`.`t` WHERE NOT status IN ('new', 'done')",
    ),
    (
        AuditCall(name="not_accepted_values", args=(("column", "status"), ("is_in", "('bad')"))),
        "SELECT * FROM `db`.`t` WHERE status IN ('bad')",
    ),
    (
        AuditCall(name="number_of_rows", args=(("threshold", "10"),)),
        "SELECT COUNT(*) AS row_count FROM `db`.`t` HAVING COUNT(*) <= 10",
    ),
    (
        AuditCall(name="forall", args=(("criteria", "(a > 0, b IS NOT NULL)"),)),
        "SELECT * FROM `db`.`t` WHERE NOT (a > 0) OR NOT (NOT b IS NULL)",
    ),
    (
        AuditCall(name="accepted_range", args=(("column", "x"), ("min_v", "0"), ("max_v", "9"))),
        "SELECT * FROM `db`.`t` WHERE x < 0 OR x > 9",
    ),
    (
        AuditCall(name="accepted_range", args=(("column", "x"), ("max_v", "9"), ("inclusive", "false"))),
        "SELECT * FROM `db`.`t` WHERE x >= 9",
    ),
    (
        AuditCall(name="at_least_one", args=(("column", "x"),)),
        "SELECT COUNT(x) AS non_null_count FROM `db`.`t` HAVING COUNT(x) = 0 AND COUNT(*) > 0",
    ),
    (
        AuditCall(name="unique_combination_of_columns", args=(("columns", "(a, b)"),)),
        "SELECT a, b, COUNT(*) AS duplicate_count FROM `db`.`t` GROUP BY a, b HAVING COUNT(*) > 1",
    ),
]


@pytest.mark.parametrize(("call", "expected"), GOLDEN, ids=[f"{call.name}-{i}" for i, (call, _) in enumerate(GOLDEN)])
def test_builtin_audit_rendering(call: AuditCall, expected: str) -> None:
    assert render_audit_query(call, TABLE, {}) == expected


def test_every_builtin_has_a_golden_rendering_or_runs_on_spark() -> None:
    checked = {call.base_name for call, _ in GOLDEN} | {call.base_name for call, _, _ in ON_SPARK}
    assert checked | {"kl_divergence"} == set(BUILTIN_AUDITS)  # (kl_divergence is an error, tested below)


def test_subquery_as_table() -> None:
    call = AuditCall(name="not_null", args=(("columns", "a"),))
    assert render_audit_query(call, "(SELECT 1 AS a)", {}) == "SELECT * FROM (SELECT 1 AS a) WHERE a IS NULL"


def test_unknown_audit_lists_near_matches() -> None:
    with pytest.raises(ProjectError) as error:
        render_audit_query(AuditCall(name="not_nul"), TABLE, {})
    assert "did you mean not_null" in (error.value.hint or "")


def test_builtin_argument_errors() -> None:
    with pytest.raises(ProjectError, match="has no argument 'column'"):
        render_audit_query(AuditCall(name="not_null", args=(("column", "a"),)), TABLE, {})
    with pytest.raises(ProjectError, match="needs the argument 'columns'"):
        render_audit_query(AuditCall(name="not_null"), TABLE, {})
    with pytest.raises(ProjectError, match="needs min_v or max_v"):
        render_audit_query(AuditCall(name="accepted_range", args=(("column", "a"),)), TABLE, {})


def test_arguments_are_parsed_not_pasted() -> None:
    call = AuditCall(name="number_of_rows", args=(("threshold", "1; DROP TABLE x"),))
    with pytest.raises(ProjectError):
        render_audit_query(call, TABLE, {})


def test_load_custom_audits() -> None:
    audits = load_audits(FIXTURE)

    assert sorted(audits) == ["assert_known_country", "assert_positive"]
    positive = audits["assert_positive"]
    assert positive.blocking is False
    assert positive.defaults == (("threshold", "0"), ("label", "'x;y'"))
    assert positive.query == "SELECT * FROM @this_model\nWHERE @column <= @threshold"
    assert positive.path == FIXTURE / "audits" / "checks.sql"
    assert audits["assert_known_country"].blocking is True


def test_render_custom_audit_with_defaults_and_arguments() -> None:
    audits = load_audits(FIXTURE)
    call = AuditCall(name="assert_positive", args=(("column", "amount"),))
    assert render_audit_query(call, TABLE, audits) == "SELECT * FROM `db`.`t` WHERE amount <= 0"
    call = AuditCall(name="assert_positive_non_blocking", args=(("column", "amount"), ("threshold", "5")))
    assert render_audit_query(call, TABLE, audits) == "SELECT * FROM `db`.`t` WHERE amount <= 5"
    known = render_audit_query(AuditCall(name="assert_known_country"), TABLE, audits)
    assert known == "SELECT * FROM `db`.`t` AS m WHERE NOT m.country IN (SELECT code FROM raw.countries)"


def test_custom_audit_list_parameter_and_missing_value() -> None:
    custom = {
        "in_list": AuditDefinition(name="in_list", query="SELECT * FROM @this_model WHERE x IN @values", path=Path("a.sql"))
    }
    rendered = render_audit_query(AuditCall(name="in_list", args=(("values", "(1, 2)"),)), TABLE, custom)
    assert rendered == "SELECT * FROM `db`.`t` WHERE x IN (1, 2)"
    with pytest.raises(ProjectError, match="has no value for @values"):
        render_audit_query(AuditCall(name="in_list"), TABLE, custom)


@pytest.mark.parametrize(
    ("where", "rendered"),
    [
        ("@column IN @values", "status IN ('a', 'b')"),
        ("@column NOT IN @values", "NOT status IN ('a', 'b')"),
        ("NOT @column IN @values", "NOT status IN ('a', 'b')"),
    ],
)
def test_a_column_argument_left_of_in_a_list_argument_is_substituted(where, rendered) -> None:
    # A user's accepted-values audit: its column stayed `${column}`, which Spark's variable substitution read as
    # nothing, so the audit found no row and passed.
    custom = {"vals": AuditDefinition(name="vals", query=f"SELECT * FROM @this_model WHERE {where}", path=Path("a.sql"))}
    call = AuditCall(name="vals", args=(("column", "status"), ("values", "ARRAY['a', 'b']")))
    assert render_audit_query(call, TABLE, custom) == f"SELECT * FROM `db`.`t` WHERE {rendered}"


def _audits_file(tmp_path: Path, text: str) -> Path:
    (tmp_path / "audits").mkdir()
    (tmp_path / "audits" / "a.sql").write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("text", "fragment", "line"),
    [
        ("AUDIT (name lonely);\n", "audit lonely has no query", 1),
        ("AUDIT (blocking false);\nSELECT * FROM @this_model", "audit without a name", 1),
        ("SELECT 1;\n", "expected AUDIT (...) before this query", 1),
        ("AUDIT (name a, blockng false);\nSELECT * FROM @this_model", "unknown audit property 'blockng'", 1),
        ("AUDIT (name a, blocking maybe);\nSELECT * FROM @this_model", "blocking must be true or false", 1),
        ("AUDIT (name a);\nSELECT 1 WHERE FALSE", "reads no table", 2),
        ("AUDIT (name a);\nSELECT *\nFROM @this_model WHERE (", "cannot parse the query of audit a", 3),
        ("AUDIT (name a);\nSELECT * FROM @this_model;\nSELECT 2", "more than one query", 3),
        ("AUDIT (name not_null);\nSELECT * FROM @this_model", "name of a built-in audit", 1),
        ("AUDIT (name a);\nSELECT * FROM @this_model;\nAUDIT (name A);\nSELECT * FROM @this_model", "defined twice", 3),
    ],
)
def test_audit_file_errors(tmp_path: Path, text: str, fragment: str, line: int) -> None:
    with pytest.raises(ProjectError) as error:
        load_audits(_audits_file(tmp_path, text))
    assert fragment in error.value.message
    assert error.value.line == line
    assert error.value.path == tmp_path / "audits" / "a.sql"


def test_other_dialect_is_transpiled(tmp_path: Path) -> None:
    text = "AUDIT (name a, dialect 'duckdb');\nSELECT * FROM @this_model WHERE x::VARCHAR > '1'"
    assert load_audits(_audits_file(tmp_path, text))["a"].query == "SELECT * FROM ${this_model} WHERE CAST(x AS STRING) > '1'"


def test_an_audit_without_a_dialect_is_read_in_the_projects_or_its_models_dialect(tmp_path: Path) -> None:
    # DuckDB quotes identifiers with "": read as Spark, "x" would be the string 'x', never NULL (SQLMesh 0.236.4
    # reads both audits below in the project's dialect and reports the row whose x is NULL).
    (tmp_path / "models").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: duckdb\n")
    (tmp_path / "models" / "m.sql").write_text(
        "MODEL (name main.m, kind FULL, audits (a_inline, a_file));\nSELECT CAST(NULL AS INT) AS x;\n\n"
        'AUDIT (name a_inline);\nSELECT * FROM @this_model WHERE "x" IS NULL AND EXTRACT(dow FROM DATE \'2024-01-07\') = 0\n'
    )
    _audits_file(tmp_path, 'AUDIT (name a_file);\nSELECT * FROM @this_model WHERE "x" IS NULL')
    project = load_project(tmp_path, use_cache=False)
    assert project.audits["a_file"].query == "SELECT * FROM ${this_model} WHERE `x` IS NULL"
    assert project.audits["a_inline"].query == (
        "SELECT * FROM ${this_model} WHERE `x` IS NULL AND (DAYOFWEEK(CAST('2024-01-07' AS DATE)) - 1) = 0"
    )


def _rows(columns: str, *rows: tuple) -> str:
    """A tiny audited table: ``(SELECT * FROM VALUES ... AS t(columns))``."""

    def literal(value: object) -> str:
        if value is None:
            return "NULL"
        if isinstance(value, str):
            return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return repr(value)

    values = ", ".join("(" + ", ".join(literal(value) for value in row) + ")" for row in rows)
    return f"(SELECT * FROM VALUES {values} AS t({columns}))"


def _call(name: str, **args: str) -> AuditCall:
    return AuditCall(name=name, args=tuple(args.items()))


_UUID = "123e4567-e89b-12d3-a456-426614174000"
# The built-ins each run on Spark: (call, audited table, offending rows the query returns). Every audit has a
# passing table (no row) and a failing one; the verdicts are SQLMesh 0.236.4's on DuckDB.
ON_SPARK = [
    (_call("not_empty_string", column="s"), _rows("s", ("a",), (None,)), []),
    (_call("not_empty_string", column="s"), _rows("s", ("a",), ("",)), [("",)]),
    (_call("not_null", columns="(s)", condition="id > 1"), _rows("id, s", (1, None), (2, None), (3, "x")), [(2, None)]),
    (_call("number_of_rows", threshold="2", condition="id > 1"), _rows("id", (1,), (2,)), [(1,)]),
    # SQLMesh: an empty table has no row without a value.
    (_call("at_least_one", column="x"), _rows("x", (None,), (1,)), []),
    (_call("at_least_one", column="x"), "(SELECT * FROM VALUES (1) AS t(x) WHERE x > 5)", []),
    (_call("at_least_one", column="x"), _rows("x", (None,), (None,)).replace("NULL", "CAST(NULL AS INT)"), [(0,)]),
    # SQLMesh: the rows must outnumber the threshold.
    (_call("number_of_rows", threshold="2"), _rows("id", (1,), (2,), (3,)), []),
    (_call("number_of_rows", threshold="2"), _rows("id", (1,), (2,)), [(2,)]),
    (_call("unique_values", columns="(s)", condition="id > 1"), _rows("id, s", (1, "a"), (2, "a"), (3, "b")), []),
    (_call("not_empty_string", column="s", condition="id > 1"), _rows("id, s", (1, ""), (2, ""), (3, "x")), [(2, "")]),
    (_call("string_length_equal", column="s", v="2"), _rows("s", ("ab",), ("é!",)), []),
    (_call("string_length_equal_non_blocking", column="s", v="2"), _rows("s", ("ab",), ("abc",)), [("abc",)]),
    (_call("string_length_between", column="s", min_v="1", max_v="3"), _rows("s", ("a",), ("abc",)), []),
    (_call("string_length_between", column="s", min_v="1", max_v="3"), _rows("s", ("",), ("abc",), ("abcd",)), [("",), ("abcd",)]),
    (_call("string_length_between", column="s", max_v="3", inclusive="false"), _rows("s", ("ab",), ("abc",)), [("abc",)]),
    (_call("valid_uuid", column="u"), _rows("u", (_UUID,), (_UUID.upper(),), (None,)), []),
    # RE2 (SQLMesh on DuckDB) ends the text at $, Java before a final line end too; version 6 is not one of 1-5.
    (_call("valid_uuid", column="u"), _rows("u", (_UUID + "\n",), (_UUID.replace("-12d3", "-62d3"),), (_UUID,)),
     [(_UUID + "\n",), (_UUID.replace("-12d3", "-62d3"),)]),
    (_call("valid_email", column="e"), _rows("e", ("a@b.com",), ("a.b+c@d-e.f-g.h",)), []),
    (_call("valid_email", column="e"), _rows("e", ("a@b",), ("a b@c.com",), ("a@b.com\n",), ("a@b.com",)),
     [("a@b",), ("a b@c.com",), ("a@b.com\n",)]),
    # RE2's \s has no vertical tab: SQLMesh accepts it in a URL.
    (_call("valid_url", column="u"), _rows("u", ("https://x.org/p",), ("ftp://ab",), ("https://a\x0bb",)), []),
    (_call("valid_url", column="u"), _rows("u", ("http://",), ("http://a",), ("https://ab\n",), ("mailto:x",)),
     [("http://",), ("http://a",), ("https://ab\n",), ("mailto:x",)]),
    (_call("valid_http_method", column="m"), _rows("m", ("GET",), ("CONNECT",), (None,)), []),
    (_call("valid_http_method", column="m"), _rows("m", ("GET",), ("get",), ("FETCH",)), [("get",), ("FETCH",)]),
    (_call("match_regex_pattern_list", column="s", patterns="('^a', 'b$')"), _rows("s", ("ax",), ("xb",)), []),
    (_call("match_regex_pattern_list", column="s", patterns="('^a', 'b$')"), _rows("s", ("ax",), ("xx",)), [("xx",)]),
    (_call("not_match_regex_pattern_list", column="s", patterns="('^a', 'b$')"), _rows("s", ("xx",), ("ba",)), []),
    (_call("not_match_regex_pattern_list", column="s", patterns="('^a', 'b$')"), _rows("s", ("xx",), ("xb",)), [("xb",)]),
    (_call("match_like_pattern_list", column="s", patterns="('a%', '%b')"), _rows("s", ("ax",), ("xb",)), []),
    (_call("match_like_pattern_list", column="s", patterns="('a%', '%b')"), _rows("s", ("ax",), ("xx",)), [("xx",)]),
    (_call("not_match_like_pattern_list", column="s", patterns="('a%', '%b')"), _rows("s", ("xx",), ("ba",)), []),
    (_call("not_match_like_pattern_list", column="s", patterns="('a%', '%b')"), _rows("s", ("xx",), ("ab",)), [("ab",)]),
    (_call("not_constant", column="x"), _rows("x", (1,), (2,)), []),
    (_call("not_constant", column="x"), _rows("x", (1,), (1,), (None,)), [(1,)]),
    (_call("not_constant", column="x", condition="x > 1"), _rows("x", (1,), (2,)), [(1,)]),
    (_call("not_null_proportion", column="x", threshold="0.5"), _rows("x", (1,), (2,), (None,)), []),
    (_call("not_null_proportion", column="x", threshold="0.5"), _rows("x", (1,), (None,), (None,), (None,)), [(4, 1)]),
    (_call("sequential_values", column="x"), _rows("x", (3,), (1,), (2,)), []),
    (_call("sequential_values", column="x"), _rows("x", (1,), (2,), (4,)), [(4, 2)]),
    (_call("sequential_values", column="x", interval="2"), _rows("x", (1,), (3,), (4,)), [(4, 3)]),
    (_call("mutually_exclusive_ranges", lower_bound_column="lo", upper_bound_column="hi"), _rows("lo, hi", (1, 2), (2, 5), (6, 7)), []),
    (_call("mutually_exclusive_ranges", lower_bound_column="lo", upper_bound_column="hi"),
     _rows("lo, hi", (1, 3), (2, 5), (9, 8)), [(1, 3, 2, False), (9, 8, None, True)]),
    (_call("mutually_exclusive_ranges", lower_bound_column="lo", upper_bound_column="hi", partition_clause="false"),
     _rows("lo, hi", (1, 2), (3, 4)), []),
    (_call("z_score", column="v", threshold="3"), _rows("v", (1.0,), (1.0,), (1.0,), (1.0,), (10.0,)), []),
    (_call("z_score", column="v", threshold="1.5"), _rows("v", (1.0,), (1.0,), (1.0,), (1.0,), (10.0,)), [(10.0, 1.7889)]),
    (_call("stddev_in_range", column="v", max_v="1"), _rows("v", (1,), (2,), (3,)), []),
    (_call("stddev_in_range", column="v", max_v="1", inclusive="false"), _rows("v", (1,), (2,), (3,)), [(1.0,)]),
    (_call("stddev_in_range", column="v", min_v="0.5", max_v="1"), _rows("v", (1,), (3,), (5,)), [(2.0,)]),
    (_call("mean_in_range", column="v", min_v="2"), _rows("v", (1,), (2,), (3,)), []),
    (_call("mean_in_range", column="v", min_v="2"), _rows("v", (1,), (2,)), [(1.5,)]),
    # Dependent columns: the observed cells' statistic is 10 (the empty cells count nothing, as in SQLMesh).
    (_call("chi_square", column_a="a", column_b="b", critical_value="3.84"), _rows("a, b", *[("x", "p")] * 10, *[("y", "q")] * 10), []),
    (_call("chi_square", column_a="a", column_b="b", critical_value="3.84"),
     _rows("a, b", ("x", "p"), ("x", "q"), ("y", "p"), ("y", "q"), ("x", None)), [(1, 0.0)]),
    (_call("chi_square", column_a="a", column_b="b", critical_value="3.84", dependent="false"),
     _rows("a, b", *[("x", "p")] * 10, *[("y", "q")] * 10), [(1, 10.0)]),
]


def _rounded(row: tuple) -> tuple:
    return tuple(round(value, 4) if isinstance(value, float) else value for value in row)


@pytest.mark.parametrize(("call", "table", "offending"), ON_SPARK, ids=[f"{call.name}-{i}" for i, (call, _, _) in enumerate(ON_SPARK)])
def test_builtin_audit_finds_the_offending_rows_on_spark(engine, call: AuditCall, table: str, offending: list[tuple]) -> None:
    rows = engine.spark.sql(render_audit_query(call, table, {})).collect()
    assert sorted(_rounded(tuple(row)) for row in rows) == sorted(offending)


def test_kl_divergence_is_an_error_as_its_query_is_in_sqlmesh() -> None:
    # SQLMesh 0.236.4's query refers to num_rows ambiguously: DuckDB refuses it and the model fails to compute.
    call = _call("kl_divergence_non_blocking", source_column="a", target_column="a", threshold="0.1")
    with pytest.raises(ProjectError, match="kl_divergence query refers to num_rows ambiguously"):
        render_audit_query(call, TABLE, {})


def test_a_partition_clause_is_an_error_as_in_sqlmesh() -> None:
    # SQLMesh 0.236.4 renders OVER (g ORDER BY ...): DuckDB finds no window named g and the model fails.
    call = _call("mutually_exclusive_ranges", lower_bound_column="lo", upper_bound_column="hi", partition_clause="g")
    with pytest.raises(ProjectError, match="cannot take partition_clause"):
        render_audit_query(call, TABLE, {})


def test_a_project_using_the_other_builtin_audits_loads(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.sql").write_text(
        "MODEL (name main.m, kind FULL, audits (not_constant(column := x), not_empty_string_non_blocking(column := y),\n"
        "  valid_email(column := y), z_score(column := x, threshold := 3)));\nSELECT 1 AS x, 'a' AS y"
    )
    model = load_project(tmp_path, use_cache=False).models["main.m"]
    assert [call.name for call in model.audits] == ["not_constant", "not_empty_string_non_blocking", "valid_email", "z_score"]


@pytest.mark.parametrize(("dialect", "offending"), [("duckdb", []), ("spark", [("a_b",)])])
def test_a_like_audits_backslash_is_literal_where_the_models_dialect_has_no_default_escape(engine, dialect, offending):
    # SQLMesh 0.236.4 on DuckDB passes this audit (a backslash is an ordinary character in DuckDB's LIKE); Spark's LIKE
    # escapes with it, so the same pattern matched a_b there.
    call = read_audit_call(r"not_match_like_pattern_list(column := s, patterns := ['a\_b', 'x\%'])", dialect, Path("m.sql"))
    rows = engine.spark.sql(render_audit_query(call, _rows("s", ("a_b",), (r"a\x",)), {})).collect()
    assert [tuple(row) for row in rows] == offending
