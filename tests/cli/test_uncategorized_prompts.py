"""Changes the categorizer cannot judge: ``plan`` asks breaking / non-breaking, ``--no-prompts`` stops with the list.

The categorizer gives up when sqlglot's semantic diff fails, as it does on a very deep expression: the diff
recurses once per nesting level. With Python's default recursion limit that takes about 1,000 nested terms, at the
edge of what Spark's parser accepts; so these tests lower the limit (``shallow_recursion``) and change a model that
sums a column 400 times, which Spark runs easily. Nothing is replaced: the real diff fails, the real categorizer
returns UNCATEGORIZED. ``shop.weighted_days`` shows what the answer decides: breaking recomputes it, non-breaking
reuses its table.
"""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path

import pytest

from dagster_sparkmesh.plan.categorize import categorize_model_change
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.snapshot.records import ChangeCategory
from dagster_sparkmesh.state.store import open_state_store

_spec = importlib.util.spec_from_file_location("sparkmesh_harness", Path(__file__).with_name("sparkmesh_harness.py"))
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)
invoke = harness.invoke

WINDOW = ["--start", "2024-01-01", "--end", "2024-01-03"]
TERMS = 400
RECURSION_HEADROOM = 200  # frames above the test for click, the plan and the state store; the diff needs ~TERMS
WEIGHTED = "MODEL (name shop.weighted, kind FULL);\n\nSELECT ds, {terms}{extra} AS weighted FROM shop.daily\n"
WEIGHTED_DAYS = "MODEL (name shop.weighted_days, kind FULL);\n\nSELECT COUNT(*) AS days, SUM(weighted) AS weighted FROM shop.weighted\n"
PER_DAY = TERMS * 60  # shop.daily's total is 60 on each of the three days


@pytest.fixture
def shallow_recursion():
    """A recursion limit the 400-term diff exceeds and nothing else in the command comes close to."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack(0)) + RECURSION_HEADROOM)
    yield
    sys.setrecursionlimit(before)


@pytest.fixture
def deep(tmp_path: Path) -> Path:
    project = harness.write_tiny_project(tmp_path / "deep")
    _write_weighted(project)
    (project / "models" / "weighted_days.sql").write_text(WEIGHTED_DAYS)
    return project


def _write_weighted(project: Path, extra: str = "") -> None:
    terms = " + ".join(["total"] * TERMS)
    (project / "models" / "weighted.sql").write_text(WEIGHTED.format(terms=terms, extra=extra))


def _applied_prod(project: Path, engine) -> str:
    applied, _ = invoke(project, ["plan", "prod", "--auto-apply", *WINDOW], engine)
    assert applied.exit_code == 0, applied.output
    _write_weighted(project, " + 1")
    with open_state_store(None, project) as state:
        return state.get_environment("prod").plan_id


def _versions(project: Path, environment: str) -> dict[str, str]:
    with open_state_store(None, project) as state:
        return {s.name: s.version for s in state.get_environment(environment).snapshots}


def _one(engine, sql: str):
    return engine.catalog.query_rows(sql)[0][0]


def test_the_change_is_really_undecidable(deep, shallow_recursion):
    before = load_project(deep, use_cache=False).models["shop.weighted"]
    _write_weighted(deep, " + 1")
    after = load_project(deep, use_cache=False).models["shop.weighted"]
    assert categorize_model_change(before, after) == ChangeCategory.UNCATEGORIZED


def test_no_prompts_stops_and_lists_the_models_to_categorize(deep, engine, clean_catalog, shallow_recursion):
    prod_plan = _applied_prod(deep, engine)

    stopped, _ = invoke(deep, ["plan", "--no-prompts", "--auto-apply", *WINDOW], engine)

    assert stopped.exit_code == 2
    assert "1 change(s) could not be categorized automatically" in stopped.output
    assert "shop.weighted" in stopped.output and "without --no-prompts" in stopped.output
    assert "[b]reaking" not in stopped.output
    with open_state_store(None, deep) as state:
        assert state.get_environment("prod").plan_id == prod_plan
        assert len(state.list_plan_applications()) == 1  # the first apply only
    assert _one(engine, "SELECT SUM(weighted) FROM shop.weighted_days") == 3 * PER_DAY


def test_the_answer_decides_whether_children_recompute(deep, engine, clean_catalog, shallow_recursion):
    _applied_prod(deep, engine)
    prod = _versions(deep, "prod")

    kept, _ = invoke(deep, ["plan", "dev", "--auto-apply", *WINDOW], engine, input="n\n")

    assert kept.exit_code == 0, kept.output
    assert "shop.weighted: this change could not be categorized automatically" in kept.output
    assert "[b]reaking (recompute it and its children) or [n]on-breaking" in kept.output
    assert "shop.weighted (non-breaking)" in kept.output
    assert "shop.weighted_days (indirect-non-breaking)" in kept.output
    dev = _versions(deep, "dev")
    assert dev["shop.weighted"] != prod["shop.weighted"] and dev["shop.weighted_days"] == prod["shop.weighted_days"]
    assert _one(engine, "SELECT MIN(weighted) FROM shop__dev.weighted") == PER_DAY + 1
    assert _one(engine, "SELECT SUM(weighted) FROM shop__dev.weighted_days") == 3 * PER_DAY  # reused, as answered

    # The answer belongs to that version of the model: another edit is asked about again.
    _write_weighted(deep, " + 2")
    broken, _ = invoke(deep, ["plan", "dev2", "--auto-apply", *WINDOW], engine, input="b\n")

    assert broken.exit_code == 0, broken.output
    assert "shop.weighted (breaking)" in broken.output
    assert "shop.weighted_days (indirect-breaking)" in broken.output
    assert _versions(deep, "dev2")["shop.weighted_days"] != prod["shop.weighted_days"]
    assert _one(engine, "SELECT SUM(weighted) FROM shop__dev2.weighted_days") == 3 * (PER_DAY + 2)
