"""Broken projects for the non-SQL files (seeds, Python models, external models, audits, unit tests).

Each folder under ``broken_other/`` is a project plus ``expected.txt``: fragments the ProjectError's message must
contain (file:line, the problem, the hint). A case with ``xfail.txt`` waits for a loader hook named in that file.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.checks.audits import load_audits
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.externals import load_external_models
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.project.python.models import load_python_model
from dagster_sparkmesh.project.seeds import read_seed, seed_content_hash
from dagster_sparkmesh.project.checks.unit_tests import load_unit_tests, validate_unit_tests

CASES = Path(__file__).parent / "broken_other"
CASE_NAMES = sorted(path.name for path in CASES.iterdir() if path.is_dir())


def _case(tmp_path: Path, name: str) -> Path:
    # A copy: loading must not write into the test tree (cache folders, bytecode).
    return Path(shutil.copytree(CASES / name, tmp_path / name, ignore=shutil.ignore_patterns("expected.txt", "xfail.txt")))


def _assert_message(error: ProjectError, name: str) -> None:
    message = str(error)
    for fragment in (CASES / name / "expected.txt").read_text().splitlines():
        if fragment.strip():
            assert fragment in message, f"{fragment!r} not in:\n{message}"


def test_there_are_enough_cases() -> None:
    assert len(CASE_NAMES) >= 8


@pytest.mark.parametrize("name", CASE_NAMES)
def test_load_project_reports_the_error(tmp_path: Path, name: str) -> None:
    reason = CASES / name / "xfail.txt"
    if reason.is_file():
        pytest.xfail(reason.read_text().strip())
    with pytest.raises(ProjectError) as error:
        load_project(_case(tmp_path, name), use_cache=False)
    _assert_message(error.value, name)


def _load_directly(project: Path) -> None:
    """What the loader does with these files, through this package's own functions only."""
    load_external_models(project)
    load_audits(project)
    models = {load_python_model(path, ModelDefaults()).name for path in sorted((project / "models").glob("*.py"))}
    for path in sorted((project / "seeds").glob("*.csv")):
        seed_content_hash(path)
        declared = (("added_on", "date"),) if "declared" in project.name else ()
        read_seed(path, declared)
    validate_unit_tests(load_unit_tests(project), models)


@pytest.mark.parametrize("name", CASE_NAMES)
def test_own_functions_report_the_error(tmp_path: Path, name: str) -> None:
    with pytest.raises(ProjectError) as error:
        _load_directly(_case(tmp_path, name))
    _assert_message(error.value, name)
