"""Issue 32, item 1: a Python macro's code is part of the version of every model that calls it (deferred or not),
so an edit re-versions exactly its users; a macro that reads the interval is the case where it matters most."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dagster_sparkmesh.project.loader import load_project
from tests.cli.sparkmesh_harness import invoke

MACROS = '''
from sqlmesh import macro

FACTOR = 10


def scaled(value):
    return value * FACTOR


@macro()
def factor(evaluator):
    evaluator.locals["start_ds"]  # reads the interval: expanded only when an interval is rendered
    return scaled(1)


@macro()
def other(evaluator):
    return 7
'''

USES_FACTOR = """
MODEL (name db.inc, kind INCREMENTAL_BY_TIME_RANGE (time_column ds), start '2024-01-01');

SELECT ds, dayofmonth(ds) * @factor() AS value
FROM (SELECT explode(sequence(DATE'2024-01-01', DATE'2024-01-10', INTERVAL 1 DAY)) AS ds)
WHERE ds BETWEEN @start_ds AND @end_ds
"""

USES_OTHER = "MODEL (name db.other, kind FULL);\n\nSELECT @other() AS seven\n"
NO_MACRO = "MODEL (name db.plain, kind FULL);\n\nSELECT 1 AS one\n"


def _project(folder: Path) -> Path:
    (folder / "models").mkdir(parents=True)
    (folder / "macros").mkdir()
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    (folder / "macros" / "m.py").write_text(textwrap.dedent(MACROS))
    (folder / "models" / "inc.sql").write_text(textwrap.dedent(USES_FACTOR))
    (folder / "models" / "other.sql").write_text(USES_OTHER)
    (folder / "models" / "plain.sql").write_text(NO_MACRO)
    return folder


def _versions(folder: Path) -> dict[str, str]:
    return {name: model.fingerprint for name, model in load_project(folder, use_cache=False).models.items()}


def _edit(folder: Path, old: str, new: str) -> None:
    macros = folder / "macros" / "m.py"
    assert old in macros.read_text()
    macros.write_text(macros.read_text().replace(old, new))


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        ("return scaled(1)", "return scaled(100)", {"db.inc"}),  # the deferred macro's body
        ("return value * FACTOR", "return value * FACTOR + 1", {"db.inc"}),  # a helper it calls
        ("FACTOR = 10", "FACTOR = 11", {"db.inc"}),  # a constant the helper reads
        ("return 7", "return 8", {"db.other"}),  # a macro expanded at load: its users only
        ("    return 7", "    # seven, always\n    return 7", set()),  # a comment is not code
    ],
)
def test_an_edit_of_a_macro_re_versions_exactly_its_users(tmp_path, old, new, changed):
    project = _project(tmp_path / "p")
    before = _versions(project)
    _edit(project, old, new)
    after = _versions(project)
    assert {name for name in before if before[name] != after[name]} == changed


def test_a_model_without_macro_calls_keeps_its_version_format(tmp_path):
    project = load_project(_project(tmp_path / "p"), use_cache=False)
    assert project.models["db.plain"].macro_code is None and project.models["db.inc"].macro_code


def test_editing_an_interval_reading_macro_re_plans_and_prod_matches_a_fresh_build(tmp_path, spark, engine, clean_catalog):
    """The issue's reproduction: prod had 10/20/30/40 and kept it after the edit, where a fresh build has
    1000/2000/3000/4000."""
    project = _project(tmp_path / "p")
    first, _ = invoke(project, ["plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-04"], engine)
    assert first.exit_code == 0, first.output
    _edit(project, "return scaled(1)", "return scaled(100)")
    second, _ = invoke(project, ["plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-04"], engine)
    assert second.exit_code == 0, second.output
    assert "db.inc" in second.output and "No changes" not in second.output
    rows = spark.sql("SELECT value FROM db.inc ORDER BY ds").collect()
    assert [row.value for row in rows] == [1000, 2000, 3000, 4000]
