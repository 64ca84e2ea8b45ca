"""SQLMesh as the referee: its source distribution (for ``examples/``) and a virtualenv of its own, both cached
outside the repository. SQLMesh pins another sqlglot than sparkmesh: it must never enter sparkmesh's environment.

Every step is skipped when its result is already in the cache; a failed download or install raises (the CI slice
must fail, not skip, when PyPI cannot be reached).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from sqlmesh_compat.records import SQLMESH_VERSION

CACHE_ROOT = Path(os.environ.get("SPARKMESH_COMPAT_CACHE", Path.home() / ".cache" / "dagster-sparkmesh"))

# What SQLMesh's examples need beside SQLMesh to load in SQLMesh: sushi's config.py builds a BigQuery config, its
# CUSTOM kinds come from the examples' own materialization package, wursthall imports faker, ibis imports ibis.
REFEREE_EXTRAS = ("google-cloud-bigquery", "faker", "ibis-framework[duckdb]")

# The same third-party imports of the example projects, for sparkmesh's side: installed into a folder of their own
# that is appended to sparkmesh's sys.path (last, so sparkmesh's own pins, sqlglot included, always win).
PROJECT_REQUIREMENTS = ("faker", "ibis-framework[duckdb]")


class RefereeSetupError(RuntimeError):
    """The referee could not be downloaded or installed: the comparison cannot run at all."""


@dataclass(frozen=True)
class Referee:
    python: Path
    """The referee virtualenv's interpreter."""
    examples: Path
    """The unpacked ``examples/`` folder of SQLMesh's source distribution (never written to: copied per run)."""
    project_requirements: Path
    """The folder with the example projects' own third-party packages, for sparkmesh's side."""


def prepare_referee(version: str = SQLMESH_VERSION) -> Referee:
    cache = CACHE_ROOT / f"sqlmesh-{version}"
    cache.mkdir(parents=True, exist_ok=True)
    examples = _unpacked_examples(cache, version)
    python = _referee_venv(cache, version, examples)
    return Referee(python=python, examples=examples, project_requirements=_project_requirements(cache, examples))


def _unpacked_examples(cache: Path, version: str) -> Path:
    examples = cache / "src" / f"sqlmesh-{version}" / "examples"
    if examples.is_dir():
        return examples
    sdist_folder = cache / "sdist"
    archive = sdist_folder / f"sqlmesh-{version}.tar.gz"
    if not archive.exists():
        _run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", f"sqlmesh=={version}",
              "-d", str(sdist_folder)], "download SQLMesh's source distribution")
    with tarfile.open(archive) as tar:
        members = [m for m in tar.getmembers() if "/examples/" in m.name]
        tar.extractall(cache / "src", members=members, filter="data")
    return examples


def _referee_venv(cache: Path, version: str, examples: Path) -> Path:
    venv = cache / "venv"
    python = venv / "bin" / "python"
    marker = venv / ".sparkmesh-referee-complete"  # written last: a half-finished install is redone
    if marker.exists():
        return python
    _run([sys.executable, "-m", "venv", "--clear", str(venv)], "create the referee's virtualenv")
    _run([str(python), "-m", "pip", "install", "--disable-pip-version-check", f"sqlmesh=={version}",
          *REFEREE_EXTRAS], f"install sqlmesh=={version} in its own virtualenv")
    # The sushi example's CUSTOM kinds: the examples' own package registers them as materialization entry points.
    _run([str(python), "-m", "pip", "install", "--no-deps", str(examples / "custom_materializations")],
         "install the examples' custom materializations")
    marker.write_text(version)
    return python


def _project_requirements(cache: Path, examples: Path) -> Path:
    target = cache / "project-requirements"
    marker = target / ".complete"
    if not marker.exists():
        _run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--target", str(target),
              *PROJECT_REQUIREMENTS], "install the example projects' own requirements for sparkmesh's side")
        marker.write_text("\n".join(PROJECT_REQUIREMENTS))
    if not (target / "custom_materializations").is_dir():
        # sushi's CUSTOM kinds, as a SQLMesh user has them: the examples' package, installed, registers its classes
        # as ``sqlmesh.materializations`` entry points (its dist-info in this folder is what sparkmesh reads).
        _run([sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-deps", "--target",
              str(target), str(examples / "custom_materializations")], "install the examples' custom materializations")
    return target


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise RefereeSetupError(f"could not {what} (exit {result.returncode}):\n{tail}")
