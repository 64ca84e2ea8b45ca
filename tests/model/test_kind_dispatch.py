"""Kind behaviour is asked of the kind records (``model/kinds.py``), never by comparing kind names elsewhere.

A comparison like ``model.kind_name == "VIEW"`` or ``kind.name in SOME_KINDS`` spreads one kind's behaviour over
many files; a new kind then silently takes whichever branch its name falls into. This scans the package's source.
"""

from __future__ import annotations

import ast
from pathlib import Path

from dagster_sparkmesh.model import kinds
from dagster_sparkmesh.model.kinds import FullKind, KindBase, ViewKind, kind_type

PACKAGE = Path(kinds.__file__).resolve().parents[1]
# The kind records, and the header parser, whose table turns a kind's written name into its record.
ALLOWED = {PACKAGE / "model" / "kinds.py", PACKAGE / "project" / "sql" / "header_kind.py"}
# "VIEW" is also the catalog's name of an object type (the engine compares it): a literal alone counts for the others.
KIND_NAMES = (frozenset(kinds._BY_NAME) | frozenset(kinds.KIND_ALIASES)) - {"VIEW"}
_COMPARISONS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)


def _is_kind_name(node: ast.expr) -> bool:
    """``kind_name``, ``x.kind_name``, ``kind.name``, ``x.kind.name``, a kind's literal name, or a ``*_KINDS`` set."""
    if isinstance(node, ast.Name):
        return node.id == "kind_name" or node.id.endswith("_KINDS")
    if isinstance(node, ast.Attribute):
        if node.attr == "kind_name" or node.attr.endswith("_KINDS"):
            return True
        base = node.value
        return node.attr == "name" and (
            (isinstance(base, ast.Name) and base.id == "kind") or (isinstance(base, ast.Attribute) and base.attr == "kind")
        )
    if isinstance(node, ast.Constant):
        return node.value in KIND_NAMES
    if isinstance(node, (ast.Tuple, ast.Set, ast.List)):  # ``kind_name in ("FULL", "SEED")``
        return bool(node.elts) and all(_is_kind_name(element) for element in node.elts)
    return False


def kind_comparisons(source: str) -> list[int]:
    """Lines of ``source`` that compare a kind's name (==, !=, in, not in)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare) and any(isinstance(op, _COMPARISONS) for op in node.ops):
            if any(_is_kind_name(operand) for operand in [node.left, *node.comparators]):
                lines.append(node.lineno)
    return lines


def test_the_detector_finds_comparisons_of_kind_names():
    found = kind_comparisons(
        'a = model.kind_name == "SEED"\n'
        "b = model.kind.name in MATERIALIZED_KINDS\n"
        "c = kind.name != 'VIEW'\n"
        'd = row.kind_name not in ("FULL", "VIEW")\n'
        "e = name in _REBUILT_KINDS\n"
        'f = x == "INCREMENTAL_BY_TIME_RANGE"\n'
        "ok = model.kind.has_physical_layer and name == 'orders'\n"
        "for name, kind in pairs: pass\n"
    )
    assert found == [1, 2, 3, 4, 5, 6]


def test_no_kind_name_comparisons_outside_the_kind_records():
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in ALLOWED
        for line in kind_comparisons(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "ask the kind record (a trait in model/kinds.py) instead of comparing names: " + ", ".join(offenders)


def test_stored_kind_names_resolve_to_their_records():
    assert kind_type("VIEW") is ViewKind and kind_type("FULL") is FullKind
    assert kind_type("SOME_FUTURE_KIND") is KindBase  # stored by another release: no traits, never written by us
    assert not KindBase.has_physical_layer and ViewKind.physical_is_view
    assert ViewKind().plain_view and not ViewKind(materialized=True).plain_view
