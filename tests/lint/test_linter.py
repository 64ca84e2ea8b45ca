from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.lint import lint_project
from dagster_sparkmesh.lint.opt_out import ALL, ignored_rules
from dagster_sparkmesh.project.loader import load_project


def write_project(root: Path, models: dict[str, str], default_start: str | None = "2024-01-01") -> Path:
    start = f"  start: '{default_start}'\n" if default_start else ""
    (root / "config.yaml").write_text(f"model_defaults:\n  dialect: spark\n{start}")
    (root / "external_models.yaml").write_text("- name: src.events\n  columns:\n    id: int\n    ds: date\n")
    (root / "models").mkdir()
    for name, text in models.items():
        (root / "models" / f"{name}.sql").write_text(text)
    return root


def lint(root: Path, **options):
    return lint_project(load_project(root, use_cache=False), **options)


INCREMENTAL = "MODEL (name db.{name}, kind INCREMENTAL_BY_TIME_RANGE (time_column ds){extra});\n"


def test_clean_project_has_no_violations(tmp_path):
    root = write_project(tmp_path, {
        "events": INCREMENTAL.format(name="events", extra="")
        + "SELECT id, ds FROM src.events WHERE ds BETWEEN @start_ds AND @end_ds",
        "summary": "MODEL (name db.summary, kind FULL);\nSELECT COUNT(*) AS n FROM db.events",
    })
    assert lint(root) == ()


def test_incremental_without_time_filter_points_at_the_query(tmp_path):
    root = write_project(tmp_path, {
        "events": INCREMENTAL.format(name="events", extra="") + "\nSELECT id, ds\nFROM src.events",
    })
    [violation] = lint(root)
    assert (violation.rule, violation.model, violation.line, violation.col) == ("time_filter", "db.events", 3, 1)
    assert "time column ds" in violation.message
    assert violation.path == root / "models" / "events.sql"
    assert "@start_ds" in violation.hint


def test_time_filter_in_a_join_or_subquery_counts(tmp_path):
    root = write_project(tmp_path, {
        "joined": INCREMENTAL.format(name="joined", extra="")
        + "SELECT e.id, e.ds FROM src.events AS e JOIN src.events AS f ON e.id = f.id AND f.ds >= @start_date",
        "nested": INCREMENTAL.format(name="nested", extra="")
        + "SELECT id, ds FROM (SELECT * FROM src.events WHERE ds < @end_ds) AS x",
    })
    assert lint(root) == ()


def test_select_star_only_matters_when_others_read_the_model(tmp_path):
    root = write_project(tmp_path, {
        "base": "MODEL (name db.base, kind FULL);\n\nSELECT *\nFROM src.events",
        "leaf": "MODEL (name db.leaf, kind FULL);\nSELECT * FROM db.base",
    })
    [violation] = lint(root)
    assert (violation.rule, violation.model, violation.line) == ("select_star", "db.base", 3)
    assert "read by db.leaf" in violation.message


def test_incremental_without_start(tmp_path):
    root = write_project(tmp_path, {
        "events": INCREMENTAL.format(name="events", extra="")
        + "SELECT id, ds FROM src.events WHERE ds BETWEEN @start_ds AND @end_ds",
        "dated": INCREMENTAL.format(name="dated", extra=", start '2024-02-01'")
        + "SELECT id, ds FROM src.events WHERE ds BETWEEN @start_ds AND @end_ds",
    }, default_start=None)
    [violation] = lint(root)
    assert (violation.rule, violation.model, violation.line) == ("missing_start", "db.events", 1)


def test_unused_cte_is_reported_at_its_definition(tmp_path):
    root = write_project(tmp_path, {
        "report": "MODEL (name db.report, kind FULL);\nWITH used AS (SELECT id FROM src.events),\n"
        "  unused AS (SELECT ds FROM src.events)\nSELECT id FROM used",
    })
    [violation] = lint(root)
    assert (violation.rule, violation.line, violation.col) == ("unused_cte", 3, 3)
    assert "CTE unused" in violation.message


def test_a_cte_read_by_another_cte_is_used(tmp_path):
    root = write_project(tmp_path, {
        "report": "MODEL (name db.report, kind FULL);\n"
        "WITH a AS (SELECT id FROM src.events), b AS (SELECT id FROM a) SELECT id FROM b",
    })
    assert lint(root) == ()


def test_opt_out_comment_silences_named_rules_or_all(tmp_path):
    bad = "SELECT id, ds FROM src.events"
    root = write_project(tmp_path, {
        "one": "-- sparkmesh: ignore-lint time_filter\n" + INCREMENTAL.format(name="one", extra="") + bad,
        "other": INCREMENTAL.format(name="other", extra="") + "-- sparkmesh: ignore-lint unused_cte\n" + bad,
        "every": "/* sparkmesh: ignore-lint */\n" + INCREMENTAL.format(name="every", extra="") + bad,
        "quoted": INCREMENTAL.format(name="quoted", extra="")
        + "SELECT id, ds, '-- sparkmesh: ignore-lint' AS note FROM src.events",
    })
    assert sorted(v.model for v in lint(root)) == ["db.other", "db.quoted"]


def test_opt_out_does_not_change_the_fingerprint(tmp_path):
    query = INCREMENTAL.format(name="events", extra="") + "SELECT id, ds FROM src.events"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    plain = load_project(write_project(tmp_path / "a", {"events": query}), use_cache=False)
    silenced = load_project(write_project(tmp_path / "b", {"events": "-- sparkmesh: ignore-lint\n" + query}), use_cache=False)
    assert plain.models["db.events"].fingerprint == silenced.models["db.events"].fingerprint


def test_selecting_rules_and_unknown_rule(tmp_path):
    root = write_project(tmp_path, {
        "events": INCREMENTAL.format(name="events", extra="") + "WITH x AS (SELECT 1 AS a) SELECT id, ds FROM src.events",
    })
    assert [v.rule for v in lint(root)] == ["time_filter", "unused_cte"]
    assert [v.rule for v in lint(root, rules=["unused_cte"])] == ["unused_cte"]
    with pytest.raises(ProjectError, match="unknown lint rule 'unused'"):
        lint(root, rules=["unused"])


def test_ignored_rules_parsing():
    assert ignored_rules("-- sparkmesh: ignore-lint select_star, unused_cte\nSELECT 1") == {"select_star", "unused_cte"}
    assert ignored_rules("# sparkmesh: ignore-lint\n") == {ALL}
    assert ignored_rules("SELECT 1 -- nothing to see") == frozenset()
