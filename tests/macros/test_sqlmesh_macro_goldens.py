"""Every example of SQLMesh's macro documentation, rendered by sparkmesh, against SQLMesh's own render recorded in
``goldens/sqlmesh_macro_docs.json`` (by ``bench/sqlmesh_compat/macro_goldens.py``, with SQLMesh's version), both in
the differential harness's canonical form. Neither SQLMesh nor Spark runs here.

A case marked with a known difference in the golden file must still differ (strict xfail): when sparkmesh comes to
render it as SQLMesh does, the mark has to go."""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
GOLDEN = Path(__file__).parent / "goldens" / "sqlmesh_macro_docs.json"


def _document() -> dict:
    return json.loads(GOLDEN.read_text())


@cache
def _results() -> dict:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    from sqlmesh_compat.macro_golden_compare import compare_document

    return {result.case: result for result in compare_document(_document())}


def _cases() -> list:
    params = []
    for case in _document()["cases"]:
        marks = [pytest.mark.xfail(reason=case["known_difference"], strict=True)] if case["known_difference"] else []
        params.append(pytest.param(case["name"], id=case["name"], marks=marks))
    return params


def test_golden_file_records_sqlmesh_version() -> None:
    document = _document()
    assert document["sqlmesh_version"] == "0.236.4"
    assert len(document["cases"]) >= 70


@pytest.mark.parametrize("case", _cases())
def test_renders_as_sqlmesh(case: str) -> None:
    result = _results()[case]
    assert result.equal, result.detail
