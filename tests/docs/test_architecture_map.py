"""docs/architecture.md is the map: its package table says what each package may import, and its invariants are
what the code's comments cite. Both are checked against the code, so the map stays true."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dagster_sparkmesh"
MAP = ROOT / "docs" / "architecture.md"
# Third-party libraries one package alone may import (the seams a test double or another engine would replace).
ONLY_IMPORTER = {"pyspark": "engine", "dagster": "dagster"}


def _section(title: str) -> list[str]:
    text = MAP.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else None].splitlines()


def _unit(name: str) -> str:
    """`model/`, `errors.py`, `project/config/` -> model, errors, project/config."""
    return name.strip("`").removesuffix("/").removesuffix(".py")


def map_rows() -> list[tuple[set[str], set[str]]]:
    """The package table's rows: (the units a row names, what they may import)."""
    rows = []
    for line in _section("Packages"):
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue
        units = {_unit(name) for name in re.findall(r"`[^`]+`", cells[0])}
        rows.append((units, {_unit(name) for name in re.findall(r"`[^`]+`", cells[2])}))
    return rows


def _unit_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE).parts
    if len(parts) == 1:
        return parts[0].removesuffix(".py")
    if parts[0] == "project" and len(parts) > 2:
        return f"project/{parts[1]}"
    return parts[0]


def _target(module: str) -> str | None:
    parts = module.split(".")[1:]
    if not parts:
        return None
    if parts[0] == "project" and len(parts) > 1 and (PACKAGE / "project" / parts[1]).is_dir():
        return f"project/{parts[1]}"
    return parts[0]


def _imported_modules(path: Path) -> list[str]:
    modules = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "dagster_sparkmesh":
                modules += [f"dagster_sparkmesh.{alias.name}" for alias in node.names]
            else:
                modules.append(node.module)
        elif isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
    return modules


def actual_imports() -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(unit -> the package's units it imports, third-party library -> the units importing it)."""
    internal: dict[str, set[str]] = {}
    external: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        unit = _unit_of(path)
        for module in _imported_modules(path):
            if module.startswith("dagster_sparkmesh"):
                target = _target(module)
                if target and target != unit:
                    internal.setdefault(unit, set()).add(target)
            else:
                external.setdefault(module.split(".")[0], set()).add(unit)
    return internal, external


def test_every_package_imports_only_what_the_map_allows():
    allowed = {unit: targets for units, targets in map_rows() for unit in units}
    internal, _ = actual_imports()
    assert set(internal) - {"__init__"} <= set(allowed), "packages missing from the map's table"
    breaches = {
        unit: sorted(targets - allowed[unit]) for unit, targets in internal.items()
        if unit in allowed and targets - allowed[unit]
    }
    assert breaches == {}, "imports the map does not allow (fix the import, or the map if the design changed)"


def test_the_map_allows_nothing_the_code_does_not_do():
    internal, _ = actual_imports()
    stale = {}
    for units, targets in map_rows():
        made = set().union(*(internal.get(unit, set()) for unit in units))
        if targets - made:
            stale[", ".join(sorted(units))] = sorted(targets - made)
    assert stale == {}, "the map allows imports no module makes: the table is stale"


def test_pyspark_and_dagster_have_one_importer_each():
    _, external = actual_imports()
    assert {library: external.get(library, set()) for library in ONLY_IMPORTER} == {
        library: {unit} for library, unit in ONLY_IMPORTER.items()
    }


def test_every_invariant_a_comment_cites_is_in_the_map():
    rows = [line for line in _section("Invariants and their tests") if re.match(r"\| \d+ \|", line)]
    numbers = {int(line.split("|")[1]) for line in rows}
    assert numbers == set(range(1, len(rows) + 1))
    cited = {
        (path.relative_to(ROOT).as_posix(), int(number))
        for path in [*PACKAGE.rglob("*.py"), *(ROOT / "tests").rglob("*.py"), ROOT / "bench" / "README.md"]
        for number in re.findall(r"architecture invariants? (\d+)", path.read_text())
    }
    assert cited and {entry for entry in cited if entry[1] not in numbers} == set()


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(path: Path, modules: set[str]) -> set[str]:
    """The package's modules ``path`` imports when it is imported: its body, TYPE_CHECKING blocks included (a cycle
    there is a cycle of the design), not the imports inside functions."""
    found: set[str] = set()
    blocks = [ast.parse(path.read_text()).body]
    while blocks:
        for node in blocks.pop():
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [f"{node.module}.{alias.name}" for alias in node.names]
                found |= {name for name in names if name in modules} or ({node.module} & modules)
            elif isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names} & modules
            elif isinstance(node, (ast.If, ast.Try)):
                blocks += [node.body, node.orelse, *[handler.body for handler in getattr(node, "handlers", [])]]
    return found


def import_cycles() -> list[list[str]]:
    """The package's module import cycles: the strongly connected components of more than one module."""
    paths = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {name: _top_level_imports(path, set(paths)) for name, path in paths.items()}
    reaches = {name: _reachable(graph, name) for name in graph}
    cycles = {frozenset(m for m in reaches[name] if name in reaches[m]) | {name} for name in graph}
    return sorted(sorted(cycle) for cycle in cycles if len(cycle) > 1)


def _reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), list(graph[start])
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += graph.get(name, ())
    return seen


def test_no_module_imports_itself_through_others():
    assert import_cycles() == []


def test_a_cycle_would_be_found():
    cycle = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _reachable(cycle, "a") == {"a", "b", "c"} and "d" not in _reachable(cycle, "a")
