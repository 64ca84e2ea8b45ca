"""A SEED kind's csv_settings: the rows and types read under each setting, the settings read from the MODEL header
(with the position of a bad one), and the settings in the model's fingerprint.

The expected rows and types were computed once with SQLMesh 0.236.4's pandas (2.3.3): ``pandas.read_csv`` with the
same settings, as ``CsvSeedReader`` calls it (int64 → BIGINT, float64 → DOUBLE, object → STRING, NaN → None)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.model.seed_settings import CsvSettings, canonical_csv_settings
from dagster_sparkmesh.project.config import ModelDefaults
from dagster_sparkmesh.project.seeds import read_seed, seed_content_hash
from dagster_sparkmesh.project.sql.model import parse_sql_model
from dagster_sparkmesh.snapshot.fingerprint import data_hash

_THREE_COLUMNS = "a,b,c\n1,NA,-\n2,-,x\n3,n.a.,0\n"

# name: (file text, settings, expected columns, expected rows): expectations from SQLMesh's pandas.
CASES = {
    "delimiter and quotechar": (
        "id;name;price\n1;café;1,5\n2;'a;b';2\n", dict(delimiter=";", quotechar="'"),
        [("id", "BIGINT"), ("name", "STRING"), ("price", "STRING")], [(1, "café", "1,5"), (2, "a;b", "2")],
    ),
    "escapechar without doublequote": (
        "a;b\n1;'it\\'s'\n2;x\n", dict(delimiter=";", quotechar="'", doublequote=False, escapechar="\\"),
        [("a", "BIGINT"), ("b", "STRING")], [(1, "it's"), (2, "x")],
    ),
    "doublequote off": ('a,b\n1,"x""y"\n', dict(doublequote=False), [("a", "BIGINT"), ("b", "STRING")], [(1, 'x"y"')]),
    "escaped delimiter": ("a,b\n1,x\\,y\n", dict(escapechar="\\"), [("a", "BIGINT"), ("b", "STRING")], [(1, "x,y")]),
    "skipinitialspace": (
        "a, b\n1, -\n2, y\n", dict(skipinitialspace=True, na_values=("-",)),
        [("a", "BIGINT"), ("b", "STRING")], [(1, None), (2, "y")],
    ),
    "lineterminator": ("a,b|1,x\ny|2,z|", dict(lineterminator="|"), [("a", "BIGINT"), ("b", "STRING")], [(1, "x\ny"), (2, "z")]),
    "tab delimiter": ("a\tb\n1\tx y\n", dict(delimiter="\t"), [("a", "BIGINT"), ("b", "STRING")], [(1, "x y")]),
    "na_values for every column": (
        _THREE_COLUMNS, dict(na_values=("-", "n.a.")),
        [("a", "BIGINT"), ("b", "DOUBLE"), ("c", "STRING")], [(1, None, None), (2, None, "x"), (3, None, "0")],
    ),
    "na_values of one column": (
        _THREE_COLUMNS, dict(column_na_values=(("b", ("-",)),)),
        [("a", "BIGINT"), ("b", "STRING"), ("c", "STRING")], [(1, None, "-"), (2, None, "x"), (3, "n.a.", "0")],
    ),
    "no default markers": (
        "a,b,c\n1,NA,-\nNA,-,x\n,n.a.,0\n", dict(keep_default_na=False),
        [("a", "STRING"), ("b", "STRING"), ("c", "STRING")], [("1", "NA", "-"), ("NA", "-", "x"), ("", "n.a.", "0")],
    ),
    "no default markers, na_values": (
        _THREE_COLUMNS, dict(keep_default_na=False, na_values=("-",)),
        [("a", "BIGINT"), ("b", "STRING"), ("c", "STRING")], [(1, "NA", None), (2, None, "x"), (3, "n.a.", "0")],
    ),
    "no default markers, na_values of one column": (
        "a,b,c\n1,NA,-\n2,-,\n3,n.a.,0\n", dict(keep_default_na=False, column_na_values=(("b", ("-",)),)),
        [("a", "BIGINT"), ("b", "STRING"), ("c", "STRING")], [(1, "NA", "-"), (2, None, ""), (3, "n.a.", "0")],
    ),
    "no default markers, booleans and an empty cell": (
        "a,b\n1,true\n2,\n", dict(keep_default_na=False), [("a", "BIGINT"), ("b", "STRING")], [(1, "true"), (2, "")],
    ),
}


def _csv(tmp_path: Path, content: str | bytes) -> Path:
    path = tmp_path / "seed.csv"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


@pytest.mark.parametrize("name", CASES)
def test_rows_and_types_are_pandas(tmp_path: Path, name: str) -> None:
    text, settings, columns, rows = CASES[name]
    seed = read_seed(_csv(tmp_path, text), (), canonical_csv_settings(settings))
    assert (seed.columns, seed.rows) == (tuple(columns), tuple(rows))


def test_an_encoding_reads_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    path = _csv(tmp_path, "id;name\n1;café\n".encode("latin-1"))
    settings = canonical_csv_settings({"delimiter": ";", "encoding": "iso8859-1"})
    assert read_seed(path, (), settings).rows == ((1, "café"),)
    with pytest.raises(ProjectError, match="not valid UTF-8") as caught:
        read_seed(path, (), canonical_csv_settings({"delimiter": ";"}))
    assert (caught.value.line, caught.value.col) == (2, 6)


def test_a_utf8_file_reads_as_utf8_whatever_its_encoding_says(tmp_path: Path) -> None:
    """SQLMesh reads every seed as UTF-8 (its encoding reaches pandas with the text): the same rows here."""
    path = _csv(tmp_path, "id;name\n1;café\n")
    assert read_seed(path, (), canonical_csv_settings({"delimiter": ";", "encoding": "iso8859-1"})).rows == ((1, "café"),)


def _seed_model(settings: str):
    kind = f"SEED (path 's.csv'{', csv_settings (' + settings + ')' if settings else ''})"
    text = f"MODEL (\n  name raw.s,\n  kind {kind}\n);\n"
    return parse_sql_model(Path("/p/models/s.sql"), text, ModelDefaults(), {}).model


def test_settings_are_read_from_the_header() -> None:
    settings = _seed_model(
        "delimiter = ';', quotechar = '''', doublequote = false, escapechar = '\\\\', skipinitialspace = true, "
        "lineterminator = '\\n', encoding = 'latin-1', na_values = ['-', 'n.a.'], keep_default_na = false"
    ).kind.csv_settings
    assert settings == CsvSettings(delimiter=";", quotechar="'", doublequote=False, escapechar="\\", skipinitialspace=True,
                                   lineterminator="\n", encoding="iso8859-1", na_values=("-", "n.a."), keep_default_na=False)
    by_column = _seed_model("na_values = (b := ['-', 'x'], \"C\" := ('?'))").kind.csv_settings
    assert by_column == CsvSettings(column_na_values=(("C", ("?",)), ("b", ("-", "x"))))
    assert _seed_model("delimiter = '\\t'").kind.csv_settings == CsvSettings(delimiter="\t")


def test_settings_that_are_pandas_defaults_are_no_settings() -> None:
    assert _seed_model("delimiter = ',', keep_default_na = true, encoding = 'UTF8'").kind.csv_settings is None


@pytest.mark.parametrize(
    ("settings", "message", "points_at", "hint"),
    [
        ("delimter = ';'", "unknown csv setting 'delimter'", "delimter", "did you mean delimiter?"),
        ("delimiter = ';;'", "delimiter must be one character, not ';;'", "';;'", "write delimiter = ';'"),
        ("encoding = 'latin-9x'", "unknown encoding 'latin-9x'", "'latin-9x'", "codec name"),
        ("keep_default_na = maybe", "expected true or false", "maybe", "write true or false"),
        ("na_values = ['-', 0]", "na_values marker 0 is not quoted text", "0]", "'0'"),
    ],
)
def test_bad_settings_point_at_the_setting(settings: str, message: str, points_at: str, hint: str) -> None:
    with pytest.raises(ProjectError) as caught:
        _seed_model(settings)
    error = caught.value
    assert message in error.message and hint in (error.hint or "")
    kind_line = f"  kind SEED (path 's.csv', csv_settings ({settings}))"
    assert (str(error.path), error.line, error.col) == ("/p/models/s.sql", 3, kind_line.index(points_at) + 1)


def test_settings_are_in_the_fingerprint_and_no_settings_keep_it(tmp_path: Path) -> None:
    plain, semicolon = _seed_model(""), _seed_model("delimiter = ';'")
    spelled_defaults = _seed_model("delimiter = ','")
    assert data_hash(plain) == data_hash(spelled_defaults) != data_hash(semicolon)
    assert data_hash(semicolon) != data_hash(_seed_model("delimiter = '|'"))
    path = _csv(tmp_path, "a,b\n1,2\n")
    assert seed_content_hash(path, semicolon.kind.csv_settings) == seed_content_hash(path)
    # The hash a seed without settings had before csv_settings were read (computed with that release's code):
    # existing seeds are not rebuilt.
    before = "035a93fa320de6f6b07e16459696916f1ba57c84d3648014db844242bcf79666"
    assert data_hash(plain.model_copy(update={"seed_content_hash": "abc"})) == before
