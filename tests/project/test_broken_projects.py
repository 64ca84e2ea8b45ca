"""The error corpus: each tiny broken project under broken/<case>/ fails with the fragments of its expected.txt
(file name and line, the quoted offending text, the hint)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import SparkMeshError
from dagster_sparkmesh.project.loader import load_project

BROKEN = Path(__file__).parent / "broken"
CASES = sorted(path.name for path in BROKEN.iterdir() if (path / "expected.txt").is_file())


def test_the_corpus_is_large_enough():
    assert len(CASES) >= 14


@pytest.mark.parametrize("case", CASES)
def test_broken_project(case, tmp_path):
    # A copy, so that the cache a load writes never lands in the source tree.
    project = tmp_path / case
    shutil.copytree(BROKEN / case, project, ignore=shutil.ignore_patterns("expected.txt"))
    with pytest.raises(SparkMeshError) as caught:
        load_project(project)
    message = str(caught.value)
    for fragment in (BROKEN / case / "expected.txt").read_text().splitlines():
        if fragment.strip():
            assert fragment.strip() in message, f"{fragment!r} not in:\n{message}"
