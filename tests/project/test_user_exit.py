"""Issue 32: project code that calls sys.exit or os._exit never ends the process, and never looks like success:
it is an error naming the file and line (exit code 2 through the CLI: see tests/reliability/test_bad_input.py)."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.project.loader import load_project
from tests.cli.sparkmesh_harness import invoke

MACRO = """
from sqlmesh import macro


@macro()
def quit_now(evaluator):
    {body}
    return 1
"""


def _project(folder: Path, files: dict[str, str]) -> Path:
    (folder / "models").mkdir(parents=True)
    files = {"config.yaml": "model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n", **files}
    for relative, text in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return folder


CALLS_MACRO = {"models/m.sql": "MODEL (name s.m, kind FULL);\n\nSELECT @quit_now() AS id\n"}


@pytest.mark.parametrize(
    ("files", "message", "where"),
    [
        ({**CALLS_MACRO, "macros/m.py": MACRO.format(body="import sys; sys.exit(3)")},
         "macro @quit_now called sys.exit(3)", ("macros/m.py", 7)),
        ({**CALLS_MACRO, "macros/m.py": MACRO.format(body="import os; os._exit(0)")},
         "macro @quit_now called os._exit(0)", ("macros/m.py", 7)),
        ({**CALLS_MACRO, "macros/m.py": "import os\nos._exit(0)\n"}, "project code called os._exit(0)", ("macros/m.py", 2)),
        ({"config.py": "import os\n\nos._exit(0)\n"}, "called os._exit(0)", ("config.py", 3)),
        ({"models/m.py": "import os\nos._exit(0)\n"}, "project code called os._exit(0)", ("models/m.py", 2)),
    ],
    ids=["macro_sys_exit", "macro_os_exit", "macro_file_os_exit", "config_py_os_exit", "python_model_os_exit"],
)
def test_project_code_ending_the_process_is_an_error_at_its_line(tmp_path, files, message, where):
    project = _project(tmp_path / "p", files)
    if "config.py" in files:
        (project / "config.yaml").unlink()
    with pytest.raises(SparkMeshError) as raised:
        load_project(project, use_cache=False)
    error = raised.value
    assert message in error.message and "must not end the process" in error.message
    assert (error.path.relative_to(project.resolve()).as_posix() if error.path else None, error.line) == where
    assert os._exit.__module__ == "posix"  # restored after loading


PYTHON_MODEL = """
import os

from dagster_sparkmesh import model


@model("s.quits", kind="FULL", columns={"id": "int"})
def execute(context, start, end, execution_time, **kwargs):
    os._exit(0)
"""


def test_a_python_model_ending_the_process_at_run_time_fails_the_plan_and_releases_its_lock(
    tmp_path, spark, engine, clean_catalog
):
    project = _project(tmp_path / "p", {"models/quits.py": PYTHON_MODEL})
    result, _ = invoke(project, ["plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-02"], engine)
    assert result.exit_code == 2, result.output
    assert "Python model s.quits called os._exit(0): project code must not end the process" in result.output
    again, _ = invoke(project, ["plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-02"], engine)
    assert "lock" not in again.output.lower()  # no table write lock left behind: the same failure, not a lock wait
    assert "called os._exit(0)" in again.output
