"""A Python model's parents found through the helper functions it calls (SQLMesh's sushi ``order_items.py``:
``get_items_table(context)`` returns ``context.resolve_table(ITEMS)`` with ``ITEMS`` a module constant). A missed
parent could schedule the model before it."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.python.models import load_python_model

HEADER = "from dagster_sparkmesh.project.python.models import model\n\n"


def _load(tmp_path: Path, body: str):
    path = tmp_path / "m.py"
    path.write_text(HEADER + body)
    return load_python_model(path, ModelDefaults(start="2024-01-01"))


def test_a_table_resolved_in_a_helper_function_is_a_parent(tmp_path: Path) -> None:
    model = _load(tmp_path, (
        "ITEMS = 'sushi.items'\n"
        "def get_items_table(context):\n"
        "    return context.resolve_table(ITEMS)\n"
        "def nested(ctx):\n"
        "    return get_items_table(ctx), ctx.table('sushi.customers')\n"
        "@model('sushi.order_items', columns={'id': 'int'})\n"
        "def execute(context, start, end, execution_time, **kwargs):\n"
        "    orders = context.resolve_table('sushi.orders')\n"
        "    items = get_items_table(context)\n"
        "    return nested(context)\n"
    ))
    assert model.depends_on == frozenset({"sushi.orders", "sushi.items", "sushi.customers"})


def test_a_helper_taking_the_table_name_as_a_parameter_adds_nothing_and_stops_nothing(tmp_path: Path) -> None:
    model = _load(tmp_path, (
        "def read(context, name):\n"
        "    return context.table(name)\n"
        "@model('s.m', columns={'id': 'int'})\n"
        "def execute(context, start, end, execution_time, **kwargs):\n"
        "    return read(context, 's.parent_' + 'x') if False else context.table('s.parent')\n"
    ))
    assert model.depends_on == frozenset({"s.parent"})


def test_recursive_helpers_end(tmp_path: Path) -> None:
    model = _load(tmp_path, (
        "def a(context, n):\n"
        "    return b(context, n - 1) if n else context.table('s.p')\n"
        "def b(context, n):\n"
        "    return a(context, n)\n"
        "@model('s.m', columns={'id': 'int'})\n"
        "def execute(context, start, end, execution_time, **kwargs):\n"
        "    return a(context, 3)\n"
    ))
    assert model.depends_on == frozenset({"s.p"})
