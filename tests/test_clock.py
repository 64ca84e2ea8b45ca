"""Only ``clock.py`` reads the wall clock: everything else takes a clock, so tests can fix or advance time."""

from __future__ import annotations

import ast
from datetime import datetime, timedelta, timezone
from pathlib import Path

from dagster_sparkmesh import clock
from dagster_sparkmesh.clock import to_naive_utc, utc_now

PACKAGE = Path(clock.__file__).resolve().parent
_WALL_CLOCK = {"now", "utcnow", "today"}


def wall_clock_reads(source: str) -> list[int]:
    """Lines calling ``datetime.now()``, ``datetime.utcnow()``, ``date.today()`` and the like."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _WALL_CLOCK
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in {"datetime", "date"}
    ]


def test_the_detector_finds_wall_clock_reads():
    assert wall_clock_reads("a = datetime.now(UTC)\nb = date.today()\nc = ctx.clock()\nd = datetime.utcnow()\n") == [1, 2, 4]


def test_only_the_clock_module_reads_the_wall_clock():
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "clock.py"
        for line in wall_clock_reads(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "take a clock (default clock.utc_now) instead: " + ", ".join(offenders)


def test_utc_now_is_naive_utc():
    before = datetime.now(timezone.utc).replace(tzinfo=None)
    now = utc_now()
    assert now.tzinfo is None and before <= now <= before + timedelta(minutes=1)


def test_to_naive_utc_converts_aware_and_keeps_naive():
    assert to_naive_utc(datetime(2024, 1, 1, 3, tzinfo=timezone(timedelta(hours=2)))) == datetime(2024, 1, 1, 1)
    assert to_naive_utc(datetime(2024, 1, 1, 3)) == datetime(2024, 1, 1, 3)
