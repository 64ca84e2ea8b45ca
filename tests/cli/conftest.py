from __future__ import annotations

import shutil
from pathlib import Path

import pytest

PROJECTS = Path(__file__).parent / "projects"


def _copy(name: str, tmp_path: Path) -> Path:
    # A copy, so that the caches a load writes never land in the source tree.
    target = tmp_path / name
    shutil.copytree(PROJECTS / name, target, ignore=shutil.ignore_patterns(".sparkmesh"))
    return target


@pytest.fixture
def shop_project(tmp_path: Path) -> Path:
    return _copy("shop", tmp_path)


@pytest.fixture
def broken_project(tmp_path: Path) -> Path:
    return _copy("broken", tmp_path)
