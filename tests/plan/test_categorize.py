import pytest

from dagster_sparkmesh.plan.categorize import (
    ColumnChange,
    categorize_direct_change,
    categorize_model_change,
    destructive_changes,
)
from dagster_sparkmesh.snapshot.records import ChangeCategory

BREAKING, NON_BREAKING = ChangeCategory.BREAKING, ChangeCategory.NON_BREAKING

# Golden pairs: (title, old query, new query, expected category).
GOLDEN = [
    ("added column", "SELECT a FROM t", "SELECT a, b + 1 AS c FROM t", NON_BREAKING),
    ("added literal column", "SELECT a, 1 AS c FROM t", "SELECT a, 1 AS c, 2 AS d FROM t", NON_BREAKING),
    ("added column in the middle", "SELECT a, b FROM t", "SELECT a, c, b FROM t", NON_BREAKING),
    ("added aggregate to a grouped query", "SELECT a FROM t GROUP BY a", "SELECT a, COUNT(*) AS n FROM t GROUP BY a", NON_BREAKING),
    ("added window column", "SELECT a FROM t", "SELECT a, COUNT(*) OVER () AS n FROM t", NON_BREAKING),
    ("changed literal", "SELECT a, 1 AS c FROM t", "SELECT a, 2 AS c FROM t", BREAKING),
    ("removed column", "SELECT a, b FROM t", "SELECT a FROM t", BREAKING),
    ("changed where", "SELECT a FROM t WHERE x > 1", "SELECT a FROM t WHERE x > 2", BREAKING),
    ("added where", "SELECT a FROM t", "SELECT a FROM t WHERE x > 2", BREAKING),
    ("reordered columns", "SELECT a, b FROM t", "SELECT b, a FROM t", BREAKING),
    ("changed expression", "SELECT a FROM t", "SELECT COALESCE(a, 0) AS a FROM t", BREAKING),
    ("added join with a column", "SELECT a FROM t", "SELECT a, u.b FROM t JOIN u ON t.id = u.id", BREAKING),
    ("added explode multiplies rows", "SELECT a FROM t", "SELECT a, EXPLODE(arr) AS e FROM t", BREAKING),
    ("added aggregate collapses rows", "SELECT a FROM t", "SELECT a, COUNT(*) AS n FROM t", BREAKING),
    ("added column under distinct", "SELECT DISTINCT a FROM t", "SELECT DISTINCT a, b FROM t", BREAKING),
    ("column added in a CTE only", "WITH x AS (SELECT a FROM t) SELECT a FROM x",
     "WITH x AS (SELECT a, b FROM t) SELECT a, b FROM x", BREAKING),
    ("formatting only", "SELECT a FROM t", "select\n   a  -- the key\nfrom t", NON_BREAKING),
]


@pytest.mark.parametrize("title, old, new, expected", GOLDEN, ids=[g[0] for g in GOLDEN])
def test_golden_pairs(title, old, new, expected):
    assert categorize_direct_change(old, new) is expected


def test_formatting_only_is_no_change_at_all(model):
    # The loader canonicalizes queries, so formatting never reaches the categorizer: the data hash is equal.
    from dagster_sparkmesh.snapshot.fingerprint import data_hash

    before = model("s.a", "SELECT a, b FROM t WHERE x = 1")
    after = model("s.a", "select a,\n  b -- note\nFROM   t where X = 1")
    assert data_hash(before) == data_hash(after)


def test_other_data_fields_make_a_change_breaking(model):
    before = model("s.a", "SELECT a FROM t")
    after = model("s.a", "SELECT a, b FROM t", kind={"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "b"})
    assert categorize_model_change(before, after) is BREAKING
    assert categorize_model_change(before, model("s.a", "SELECT a, b FROM t")) is NON_BREAKING


def test_python_models_changes_are_breaking(model):
    before = model("s.a", "SELECT a FROM t").model_copy(update={"query": None, "python_source": "x = 1"})
    assert categorize_model_change(before, before.model_copy(update={"python_source": "x = 2"})) is BREAKING


def test_destructive_changes_from_projections():
    old = "SELECT a, CAST(b AS INT) AS b, c FROM t"
    new = "SELECT a, CAST(b AS STRING) AS b, d FROM t"
    assert destructive_changes(old, new) == [
        ColumnChange(name="b", old_type="int", new_type="string"),
        ColumnChange(name="c", dropped=True),
    ]
    assert destructive_changes("SELECT a FROM t", "SELECT a, b FROM t") == []


def test_destructive_changes_unknown_behind_star():
    assert destructive_changes("SELECT * FROM t", "SELECT a FROM t") == []


def test_destructive_changes_from_declared_columns():
    old = (("a", "INT"), ("b", "STRING"))
    assert destructive_changes(None, None, old, (("a", "BIGINT"), ("c", "STRING"))) == [
        ColumnChange(name="a", old_type="int", new_type="bigint"),
        ColumnChange(name="b", dropped=True, old_type="string"),
    ]


def test_a_python_models_diff_shows_the_users_source_not_the_hashed_form(model):
    from dagster_sparkmesh.plan.diffs import definition_diff

    def python(code: str):
        normalized = "Module(body=[...])"  # what is hashed: never shown
        return model("s.p", "SELECT 1").model_copy(
            update={"query": None, "python_source": normalized, "python_code": code}
        )

    diff = definition_diff(python("# rows\nx = 1\n"), python("# rows\nx = 2\n"))
    assert "-x = 1" in diff and "+x = 2" in diff and "Module(" not in diff
