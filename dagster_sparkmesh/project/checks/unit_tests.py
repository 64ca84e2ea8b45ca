"""Model unit tests from ``tests/*.yaml`` (SQLMesh's format): fixed input rows, the expected output, the interval.

```yaml
test_orders:
  model: shop.orders
  inputs:
    raw.orders:            # rows: [...], a bare list, query: SELECT ..., or format: csv + csv: |
      rows: [{id: 1, ds: 2024-01-01}]
    recent: [{id: 2}]      # a bare name: feeds the query's tables (and CTEs) named so
  outputs:
    query: [{id: 1}]       # or {rows: [...]}, {query: SELECT ...} or SELECT ...
    ctes:                  # optional: rows of named CTEs of the model's query, in the same forms
      filtered: [{id: 1}]
  vars: {start: 2024-01-01, end: 2024-01-02, execution_time: 2024-01-02}
```
Whether the models exist is checked by ``validate_unit_tests`` once the project's models are known; whether a test
gives every table its model reads, by ``incomplete_inputs`` when the test runs (as SQLMesh checks it when it builds
the test: the project still loads, and only that test fails).
"""

from __future__ import annotations

import csv
import difflib
import io
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import sqlglot
import yaml
from sqlglot.errors import ParseError

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.records import UnitTest
from dagster_sparkmesh.snapshot.naming import DEFAULT_SCHEMA
from dagster_sparkmesh.project.externals import compose_yaml, node_col, node_line, node_value, normalize_table_name
from dagster_sparkmesh.macros.parse_errors import parse_error_description

Row = tuple[tuple[str, object], ...]
_TEST_KEYS = ("model", "inputs", "outputs", "vars", "description")
_INPUT_KEYS = ("rows", "query", "format", "csv")
_OUTPUT_KEYS = ("query", "ctes", "partial")
_VARS = ("start", "end", "execution_time")
_BARE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def load_unit_tests(project_path: Path) -> tuple[UnitTest, ...]:
    folder = project_path / "tests"
    paths = sorted([*folder.glob("*.yaml"), *folder.glob("*.yml")]) if folder.is_dir() else []
    tests: list[UnitTest] = []
    for path in paths:
        for test in _read_file(path):
            twin = next((other for other in tests if other.name == test.name), None)
            if twin is not None:
                raise ProjectError(
                    f"unit test {test.name} is defined twice",
                    path=path,
                    line=test.line,
                    hint=f"also defined at {twin.path}:{twin.line}; rename one of them",
                )
            tests.append(test)
    return tuple(tests)


def validate_unit_tests(
    tests: Collection[UnitTest],
    model_names: Collection[str],
    parents: Mapping[str, Collection[str]] | None = None,
) -> tuple[str, ...]:
    """Warnings (``file:line: ...``) for a test of a model the project does not have (the loader leaves it out), and
    for inputs that the model does not read (given ``parents``) or that no model or external model declares.

    SQLMesh creates a fixture table for every input and runs the test, so an input the model does not read is
    unused, never an error (a test copied from another model keeps working). It is still said, without stopping
    anything: here a misspelled input leaves the table the model reads without the test's rows."""
    known = set(model_names)
    warnings: list[str] = []
    for test in tests:
        if test.model not in known:  # SQLMesh warns and leaves the test out
            warnings.append(f"{test.path.name}:{_key_line(test, ('model',))}: unit test {test.name} is for unknown "
                            f"model {test.model} ({_near_hint(test.model, known)}): not run, as in SQLMesh")
            continue
        reads = parents.get(test.model, ()) if parents is not None else None
        for name in [name for name, _ in test.inputs] + [name for name, _ in test.input_queries]:
            if "." not in name:  # a bare name: it feeds the query's tables or CTEs of that name, if any
                continue
            if name not in known:
                problem = f"is not a model of the project ({_near_hint(name, known)})"
            elif reads is not None and name not in reads:
                problem = f"is not read by {test.model} (it reads: {', '.join(sorted(reads)) or 'nothing'})"
            else:
                continue
            warnings.append(f"{test.path.name}:{_key_line(test, ('inputs', name))}: input {name} of unit test "
                            f"{test.name} {problem}: unused, as in SQLMesh")
    return tuple(warnings)


def incomplete_inputs(test: UnitTest, parents: Collection[str], reads_itself: bool) -> str | None:
    """Why ``test`` cannot run without reading real tables (None: it can). ``parents`` are the tables its model
    reads (models and external models, by the names its inputs use), its own table apart (``reads_itself``).

    As in SQLMesh: a test that gives inputs must give one for every parent (a table is never read from the
    warehouse, where its rows would decide the test); the model's own table is then empty unless given. A test that
    gives none runs in SQLMesh's empty test database, where the tables the model reads do not exist."""
    given = {name for name, _ in test.inputs} | {name for name, _ in test.input_queries}
    given |= {f"{DEFAULT_SCHEMA}.{name}" for name in given if "." not in name}  # a bare name: the model named so
    if given:
        missing = sorted(set(parents) - given)
        if missing:
            return (f"{test.path}: incomplete test {test.name}, missing input {_models(missing)} "
                    f"(a test that gives inputs must give one for every table its model reads, as in SQLMesh)")
        return None
    unread = sorted({*parents, *([test.model] if reads_itself else [])})
    if unread:
        return (f"{test.path}: test {test.name} gives no inputs, and its model reads {', '.join(unread)}: as in "
                f"SQLMesh, whose test database is empty, the test has no such table (give each as an input)")
    return None


def _models(names: list[str]) -> str:
    return f"model{'s' if len(names) > 1 else ''} {', '.join(names)}"


def _near_hint(name: str, known: Collection[str]) -> str:
    near = difflib.get_close_matches(name, sorted(known), n=3)
    return f"did you mean {', '.join(near)}?" if near else "check the model name (schema.name)"


def _read_file(path: Path) -> list[UnitTest]:
    root = compose_yaml(path)
    if root is None:
        return []
    if not isinstance(root, yaml.MappingNode):
        raise ProjectError(
            "a unit test file must map test names to tests", path=path, line=node_line(root), hint="write 'test_name:' then 'model:'"
        )
    return [_read_test(path, str(node_value(key)), key, value) for key, value in root.value]


def _fields(path: Path, node: yaml.Node, keys: tuple[str, ...], what: str) -> dict[str, yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        raise ProjectError(f"{what} must be a mapping", path=path, line=node_line(node), col=node_col(node))
    fields: dict[str, yaml.Node] = {}
    for key_node, value_node in node.value:
        key = str(node_value(key_node)).lower()
        if key not in keys:
            near = difflib.get_close_matches(key, keys, n=1)
            raise ProjectError(
                f"unknown key {key!r} in {what}",
                path=path,
                line=node_line(key_node),
                col=node_col(key_node),
                snippet=key,
                hint=f"did you mean {near[0]!r}?" if near else f"supported keys: {', '.join(keys)}",
            )
        fields[key] = value_node
    return fields


def _read_test(path: Path, name: str, key: yaml.Node, node: yaml.Node) -> UnitTest:
    fields = _fields(path, node, _TEST_KEYS, f"unit test {name}")
    for required in ("model", "outputs"):
        if required not in fields:
            raise ProjectError(f"unit test {name} has no {required}", path=path, line=node_line(key), hint=f"add '{required}:'")
    rows, queries = _read_inputs(path, fields["inputs"]) if "inputs" in fields else ((), ())
    outputs = _fields(path, fields["outputs"], _OUTPUT_KEYS, f"outputs of {name}")
    if not outputs:
        raise ProjectError(f"outputs of {name} are empty", path=path, line=node_line(fields["outputs"]),
                           hint="add 'query:' with the expected rows (or 'ctes:' with those of named CTEs)")
    expected_rows, expected_query = _expected(path, outputs["query"], f"outputs of {name}") if "query" in outputs else ((), None)
    ctes = _read_ctes(path, outputs["ctes"], name) if "ctes" in outputs else ()
    every = _flag(path, outputs.get("partial"))  # ``outputs: partial: true`` stands for each output
    partial = [""] if "query" in outputs and (every or _partial(path, outputs["query"])) else []
    partial += [cte for cte, node in _cte_nodes(outputs.get("ctes")) if every or _partial(path, node)]
    variables = _read_vars(path, fields["vars"]) if "vars" in fields else {}
    return UnitTest(
        name=name,
        model=normalize_table_name(str(node_value(fields["model"])), path=path, node=fields["model"]),
        inputs=rows,
        input_queries=queries,
        expected_rows=expected_rows,
        expected_query=expected_query,
        expected_ctes=ctes,
        checks_query="query" in outputs,
        partial=tuple(partial),
        path=path,
        line=node_line(key),
        **variables,
    )


def _read_inputs(path: Path, node: yaml.Node) -> tuple[tuple[tuple[str, tuple[Row, ...]], ...], tuple[tuple[str, str], ...]]:
    if not isinstance(node, yaml.MappingNode):
        raise ProjectError("inputs must map model names to rows", path=path, line=node_line(node))
    rows: dict[str, tuple[Row, ...]] = {}
    queries: dict[str, str] = {}
    for key_node, value_node in node.value:
        name = _input_name(path, key_node)
        if name in rows or name in queries:
            raise ProjectError(f"input {name} is given twice", path=path, line=node_line(key_node), snippet=name)
        if isinstance(value_node, yaml.SequenceNode):
            rows[name] = _rows(path, value_node)
            continue
        fields = _fields(path, value_node, _INPUT_KEYS, f"input {name}")
        if "query" in fields:
            queries[name] = _query(path, fields["query"])
        elif "csv" in fields:
            rows[name] = _csv_rows(path, fields["csv"], fields.get("format"))
        elif "rows" in fields:
            rows[name] = _rows(path, fields["rows"])
        else:
            raise ProjectError(f"input {name} has no rows", path=path, line=node_line(key_node), hint="add 'rows:' with a list of rows")
    return tuple(rows.items()), tuple(queries.items())


def _input_name(path: Path, node: yaml.Node) -> str:
    """``schema.name`` (or ``catalog.schema.name``) of a table the model reads, or one bare name: as in SQLMesh,
    its rows then stand for every table the model's query names so, a CTE of that name included."""
    text = str(node_value(node)).strip()
    bare = text.strip('`"')
    if bare and _BARE_NAME.match(bare):
        return bare.lower()
    return normalize_table_name(text, path=path, node=node)


def _expected(path: Path, output: yaml.Node, what: str) -> tuple[tuple[Row, ...], str | None]:
    """Expected rows: a list of rows, ``{rows: [...]}``, ``{query: SELECT ...}`` or the SQL text itself."""
    if isinstance(output, yaml.SequenceNode):
        return _rows(path, output), None
    if isinstance(output, yaml.ScalarNode) and isinstance(node_value(output), str):
        return (), _query(path, output)
    inner = _fields(path, output, ("rows", "query", "partial"), what)
    if "query" in inner:
        return (), _query(path, inner["query"])
    if "rows" not in inner:
        raise ProjectError(f"{what} have no rows", path=path, line=node_line(output), hint="add 'rows:'")
    return _rows(path, inner["rows"]), None


def _flag(path: Path, node: yaml.Node | None) -> bool:
    value = node_value(node) if node is not None else False
    if not isinstance(value, bool):
        raise ProjectError(f"partial must be true or false, not {value!r}", path=path, line=node_line(node))  # type: ignore[arg-type]
    return value


def _partial(path: Path, output: yaml.Node) -> bool:
    """An output's own ``partial: true`` (beside its ``rows`` or ``query``)."""
    found = _child(output, "partial") if isinstance(output, yaml.MappingNode) else None
    return _flag(path, found[1]) if found else False


def _cte_nodes(node: yaml.Node | None) -> list[tuple[str, yaml.Node]]:
    if not isinstance(node, yaml.MappingNode):
        return []
    return [(str(node_value(key)).lower(), value) for key, value in node.value]


def _read_ctes(path: Path, node: yaml.Node, test: str) -> tuple[tuple[str, tuple[Row, ...], str | None], ...]:
    if not isinstance(node, yaml.MappingNode):
        raise ProjectError(f"ctes of {test} must map CTE names to expected rows", path=path, line=node_line(node),
                           hint="write 'ctes:' then '  my_cte:' then '    rows: [...]'")
    ctes = []
    for key_node, value_node in node.value:
        name = str(node_value(key_node)).lower()
        ctes.append((name, *_expected(path, value_node, f"expected rows of CTE {name} in {test}")))
    return tuple(ctes)


def _rows(path: Path, node: yaml.Node) -> tuple[Row, ...]:
    if not isinstance(node, yaml.SequenceNode):
        raise ProjectError("rows must be a list of mappings", path=path, line=node_line(node), col=node_col(node))
    rows = []
    for item in node.value:
        value = node_value(item)
        if not isinstance(value, dict):
            raise ProjectError(
                "a row must be a mapping of column to value", path=path, line=node_line(item), col=node_col(item), hint="write '- {id: 1}'"
            )
        rows.append(tuple((str(column).lower(), cell) for column, cell in value.items()))
    return tuple(rows)


def _csv_rows(path: Path, node: yaml.Node, format_node: yaml.Node | None) -> tuple[Row, ...]:
    if format_node is not None and str(node_value(format_node)).lower() != "csv":
        raise ProjectError("only format: csv is supported for csv inputs", path=path, line=node_line(format_node))
    reader = csv.reader(io.StringIO(str(node_value(node))))
    lines = [line for line in reader if line]
    if not lines:
        return ()
    header = [column.strip().lower() for column in lines[0]]
    rows = []
    for offset, line in enumerate(lines[1:], start=1):
        if len(line) != len(header):
            raise ProjectError(
                f"csv row {offset} has {len(line)} field(s) but the header has {len(header)}", path=path, line=node_line(node) + offset + 1
            )
        # Cells are typed as YAML would type them, so csv and rows inputs agree (1 is an int, 2024-01-01 a date).
        rows.append(tuple((column, yaml.safe_load(cell) if cell.strip() else None) for column, cell in zip(header, line)))
    return tuple(rows)


def _query(path: Path, node: yaml.Node) -> str:
    text = str(node_value(node))
    try:
        statements = [statement for statement in sqlglot.parse(text, dialect="spark") if statement is not None]
    except ParseError as error:
        raise ProjectError(f"cannot parse query: {parse_error_description(error)}", path=path, line=node_line(node), snippet=text) from error
    if len(statements) != 1:
        raise ProjectError("expected exactly one query", path=path, line=node_line(node), snippet=text, hint="remove the ';'")
    return statements[0].sql(dialect="spark")


def _read_vars(path: Path, node: yaml.Node) -> dict[str, Any]:
    """The interval keys (start, end, execution_time) and, under ``variables``, every other key: as in SQLMesh, the
    model's rendering sees them as variables (``@start_date``, ``@VAR('start_date')``)."""
    if not isinstance(node, yaml.MappingNode):
        raise ProjectError("vars must be a mapping", path=path, line=node_line(node), col=node_col(node),
                           hint="write 'vars:' then '  start: 2024-01-01' or '  my_var: value'")
    times: dict[str, Any] = {}
    variables: dict[str, str | int | float | bool] = {}
    for key_node, value_node in node.value:
        key = str(node_value(key_node)).lower()
        value = node_value(value_node)
        if key in _VARS:
            times[key] = _iso(value)
        elif isinstance(value, (str, int, float, bool)) or hasattr(value, "isoformat"):
            variables[key] = _iso(value) if hasattr(value, "isoformat") else value
        else:
            raise ProjectError(f"variable {key!r} of vars must be a text, number or boolean, not {value!r}",
                               path=path, line=node_line(value_node), col=node_col(value_node), snippet=key,
                               hint="give one value (a list or mapping is not supported here)")
    return {**times, "variables": tuple(variables.items())} if variables else times


def _iso(value: Any) -> str:
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _key_line(test: UnitTest, keys: tuple[str, ...]) -> int:
    """Line of a key inside the test's YAML (e.g. an input's name); the test's own line if it can't be found."""
    try:
        node: yaml.Node | None = compose_yaml(test.path)
    except ProjectError:
        return test.line
    line = test.line
    for key in (test.name, *keys):
        found = _child(node, key)
        if found is None:
            return test.line
        line, node = node_line(found[0]), found[1]
    return line


def _child(node: yaml.Node | None, key: str) -> tuple[yaml.Node, yaml.Node] | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    for key_node, value_node in node.value:
        text = str(node_value(key_node))
        if text == key or text.replace("`", "").replace('"', "").lower() == key:
            return key_node, value_node
    return None
