"""DuckDB's file readers with options (``READ_CSV('f.csv', header = true)``, ``READ_CSV_AUTO``, ``READ_PARQUET(...,
union_by_name = true)``) as Spark's file reads with options: ``csv.`f.csv` WITH ('header' = 'true', ...)``.

sqlglot writes these calls to Spark as they are (``READ_CSV(...)``, which Spark does not have) or not at all
(``READ_PARQUET`` with options is an empty path), and it cannot parse Spark's ``WITH (options)`` of a file read. So
the load writes a call to a function of ours, ``SPARKMESH_FILE('csv', 'f.csv', 'header', 'true', ...)``, which the
canonical query keeps (and hashes) and sqlglot parses back; rendering turns it into Spark's text
(``query_tables.spark_file_read``), where the path is also anchored at the project folder.

Only what has a faithful Spark equivalent is translated; any other option (``skip``, ``filename``, ``header =
false`` without ``columns``, whose columns DuckDB names ``column0``...) is refused at load with the file and line.
"""

from __future__ import annotations

import json

from sqlglot import exp

FILE_READ = "SPARKMESH_FILE"
"""The function the canonical query keeps for a file read with options: format, path, then option name/value pairs."""
TYPES_OPTION = "sparkmesh.types"
"""An option of ours: ``duckdb``, the rendering casts the columns read as text to the types DuckDB's sniffer gives
them (``project.csv_types``); or the JSON of ``columns = {...}``'s [name, Spark type] pairs, which name and type the
columns by position. Spark is passed the other options only. The value is part of the stored query and
so of the model's fingerprint: a release that types CSV columns otherwise must change it, so that the tables typed
the old way are built again."""

_CSV_READERS = frozenset({"read_csv", "read_csv_auto"})
_PARQUET_READERS = frozenset({"read_parquet", "parquet_scan"})
_OTHER_READERS = frozenset({"read_json", "read_json_auto", "read_ndjson", "read_ndjson_auto", "read_json_objects",
                            "read_text", "read_blob", "read_xlsx", "sniff_csv"})

_CSV_OPTIONS = {"delim": "sep", "sep": "sep", "quote": "quote", "escape": "escape", "nullstr": "nullValue"}
"""DuckDB's CSV options with the same meaning in Spark's CSV reader (same name in Spark: the value)."""


class UnsupportedRead(Exception):
    """A DuckDB reader, or one of its options, that has no faithful Spark equivalent: the message says which."""


def reader_name(node: exp.Expression) -> str | None:
    """``read_csv``, ``read_parquet`` ... when ``node`` is a call of one of DuckDB's file readers."""
    if isinstance(node, exp.ReadCSV):
        return "read_csv"
    if isinstance(node, exp.ReadParquet):
        return "read_parquet"
    if isinstance(node, exp.Anonymous) and isinstance(node.this, str):
        name = node.this.lower()
        if name in _CSV_READERS | _PARQUET_READERS | _OTHER_READERS:
            return name
    return None


def needs_translation(node: exp.Expression) -> bool:
    """A reader call sqlglot does not write as Spark's file read by itself (one bare READ_PARQUET path it does)."""
    name = reader_name(node)
    if name is None:
        return False
    return not (isinstance(node, exp.ReadParquet) and len(node.expressions) == 1
                and isinstance(node.expressions[0], exp.Literal))


def spark_reads(call: exp.Expression) -> list[exp.Expression]:
    """The ``SPARKMESH_FILE(...)`` calls that read what ``call`` reads, one per path (DuckDB unions a list of
    files by position); raises UnsupportedRead for what Spark would read differently."""
    name = reader_name(call)
    arguments = [call.this, *call.expressions] if isinstance(call, exp.ReadCSV) else list(call.expressions)
    if name in _OTHER_READERS:
        raise UnsupportedRead(f"DuckDB's {name.upper()} has no Spark equivalent here")
    paths, options = _paths(name, arguments), _options(name, arguments)
    file_format, spark_options = ("csv", _csv_options(name, options)) if name in _CSV_READERS else (
        "parquet", _parquet_options(name, options))
    if len(paths) > 1 and spark_options.get("mergeSchema") == "true":
        raise UnsupportedRead(f"{name.upper()} of a list of files with union_by_name (Spark merges the schemas of "
                              "one read only)")
    pairs = [text for pair in spark_options.items() for text in pair]
    return [
        exp.Anonymous(this=FILE_READ, expressions=[exp.Literal.string(text) for text in (file_format, path, *pairs)])
        for path in paths
    ]


def _paths(name: str, arguments: list[exp.Expression]) -> list[str]:
    first = arguments[0] if arguments else None
    items = first.expressions if isinstance(first, exp.Array) else [first]
    if not items or not all(isinstance(item, exp.Literal) and item.is_string for item in items):
        raise UnsupportedRead(f"{name.upper()} needs its path (or list of paths) as string literals")
    return [item.name for item in items]


def _options(name: str, arguments: list[exp.Expression]) -> dict[str, exp.Expression]:
    options = {}
    for argument in arguments[1:]:
        named = isinstance(argument, (exp.EQ, exp.PropertyEQ)) and isinstance(argument.this, (exp.Column, exp.Identifier))
        if not named:
            raise UnsupportedRead(f"{name.upper()} takes one path (or list) and named options: "
                                  f"{argument.sql(dialect='duckdb')}")
        options[argument.this.name.lower()] = argument.expression
    return options


def _boolean(name: str, option: str, value: exp.Expression) -> bool:
    if isinstance(value, exp.Boolean):
        return bool(value.this)
    if isinstance(value, exp.Literal) and value.name.lower() in {"true", "false", "1", "0"}:
        return value.name.lower() in {"true", "1"}
    raise UnsupportedRead(f"{name.upper()}'s {option} must be true or false, not {value.sql(dialect='duckdb')}")


def _text(name: str, option: str, value: exp.Expression) -> str:
    if isinstance(value, exp.Literal) and value.is_string:
        return value.name
    raise UnsupportedRead(f"{name.upper()}'s {option} must be a string literal, not {value.sql(dialect='duckdb')}")


def _csv_options(name: str, options: dict[str, exp.Expression]) -> dict[str, str]:
    """Spark's options for DuckDB's: the header must be said (DuckDB guesses it; Spark cannot), the columns are
    read as text and typed as DuckDB's sniffer types them (``TYPES_OPTION``), and a doubled quote escapes a quote
    (DuckDB's default escape, where Spark's is a backslash)."""
    header = options.pop("header", None)
    declared = _declared_columns(name, options.pop("columns")) if "columns" in options else None
    if declared is None and (header is None or not _boolean(name, "header", header)):
        raise UnsupportedRead(f"{name.upper()} without header = true (DuckDB guesses whether the first row is a "
                              "header, and names the columns column0, column1 ... without one)")
    spark = {"header": "true", "inferSchema": "false", "escape": '"', TYPES_OPTION: "duckdb"}
    sniffing = "auto_detect" not in options or _boolean(name, "auto_detect", options.pop("auto_detect"))
    if not sniffing and declared is None:
        raise UnsupportedRead(f"{name.upper()} with auto_detect = false (the columns come from columns = {{...}})")
    if declared is not None:
        # The columns named and typed by position; whether the first row is a header is sniffed when rendered
        # (``auto``), as DuckDB sniffs it, unless the call says (without sniffing, DuckDB reads no header).
        said = None if header is None else str(_boolean(name, "header", header)).lower()
        spark["header"] = said or ("auto" if sniffing else "false")
        spark[TYPES_OPTION] = json.dumps(declared)
    if "all_varchar" in options and _boolean(name, "all_varchar", options.pop("all_varchar")):
        del spark[TYPES_OPTION]
    for option in list(options):
        if option in _CSV_OPTIONS:
            spark[_CSV_OPTIONS[option]] = _text(name, option, options.pop(option))
    _refuse_others(name, options)
    return spark


def _declared_columns(name: str, value: exp.Expression) -> list[list[str]]:
    """``columns = {'name': 'TYPE', ...}`` as [name, Spark type] pairs."""
    pairs = value.expressions if isinstance(value, exp.Struct) else []
    declared = []
    for pair in pairs:
        if not isinstance(pair, exp.PropertyEQ) or not (isinstance(pair.expression, exp.Literal) and pair.expression.is_string):
            raise UnsupportedRead(f"{name.upper()}'s columns must be a struct of 'name': 'TYPE' literals")
        try:
            data_type = exp.DataType.build(pair.expression.name, dialect="duckdb").sql(dialect="spark")
        except Exception as error:  # sqlglot raises several kinds for a type it cannot read
            raise UnsupportedRead(f"{name.upper()}'s column type {pair.expression.name!r} is not a type") from error
        declared.append([pair.this.name, data_type])
    if not declared:
        raise UnsupportedRead(f"{name.upper()}'s columns must be a struct of 'name': 'TYPE' literals")
    return declared


def _parquet_options(name: str, options: dict[str, exp.Expression]) -> dict[str, str]:
    """``union_by_name``: the files' columns matched by name, missing ones NULL: Spark's ``mergeSchema``."""
    spark = {}
    if "union_by_name" in options and _boolean(name, "union_by_name", options.pop("union_by_name")):
        spark["mergeSchema"] = "true"
    _refuse_others(name, options)
    return spark


def _refuse_others(name: str, options: dict[str, exp.Expression]) -> None:
    if options:
        raise UnsupportedRead(f"{name.upper()}'s option {sorted(options)[0]} has no Spark equivalent here")
