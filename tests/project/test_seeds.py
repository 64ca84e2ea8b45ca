from __future__ import annotations

import hashlib
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from dagster_sparkmesh.errors import ProjectError
from dagster_sparkmesh.project.seeds import read_seed, seed_columns, seed_content_hash

ITEMS = Path(__file__).parent / "fixtures" / "other_project" / "seeds" / "items.csv"


def _csv(tmp_path: Path, content: str | bytes) -> Path:
    path = tmp_path / "seed.csv"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def test_content_hash_is_sha256_of_bytes() -> None:
    assert seed_content_hash(ITEMS) == hashlib.sha256(ITEMS.read_bytes()).hexdigest()


def test_inferred_columns() -> None:
    # The types SQLMesh 0.236.4 gives this file (pandas' dtypes): the third row's empty cells make `big` float64 and
    # `in_stock` object; pandas parses no dates.
    assert seed_columns(ITEMS, ()) == (
        ("item_id", "BIGINT"),
        ("name", "STRING"),
        ("price", "DOUBLE"),
        ("in_stock", "STRING"),
        ("added_on", "STRING"),
        ("updated_at", "STRING"),
        ("big", "DOUBLE"),
    )


def test_inferred_columns_and_values_are_sqlmeshs(tmp_path: Path) -> None:
    # Types and values read back from SQLMesh 0.236.4's DuckDB table of this seed (information_schema, SELECT *).
    path = _csv(
        tmp_path,
        "i,ib,f,b,bb,bt,d,ts,e,z,p,mix\n"
        "1,1,1.5,true,True,t,2024-01-01,2024-01-01 10:00:00,,007,+4,1\n"
        "2,,2,FALSE,,f,2024-01-02,2024-01-02T11:30:00,,010,5,x\n"
        "3,3,1e3,True,False,t,2024-01-03,2024-01-03 00:00:00.5,,123,6,2\n",
    )
    seed = read_seed(path, ())
    assert seed.columns == (
        ("i", "BIGINT"), ("ib", "DOUBLE"), ("f", "DOUBLE"), ("b", "BOOLEAN"), ("bb", "STRING"), ("bt", "STRING"),
        ("d", "STRING"), ("ts", "STRING"), ("e", "DOUBLE"), ("z", "BIGINT"), ("p", "BIGINT"), ("mix", "STRING"),
    )
    assert seed.rows == (
        (1, 1.0, 1.5, True, "true", "t", "2024-01-01", "2024-01-01 10:00:00", None, 7, 4, "1"),
        (2, None, 2.0, False, None, "f", "2024-01-02", "2024-01-02T11:30:00", None, 10, 5, "x"),
        (3, 3.0, 1000.0, True, "false", "t", "2024-01-03", "2024-01-03 00:00:00.5", None, 123, 6, "2"),
    )


def test_declared_types_win_and_are_normalized() -> None:
    columns = seed_columns(ITEMS, (("PRICE", "decimal(10,2)"), ("item_id", "bigint")))
    assert columns[0] == ("item_id", "BIGINT")
    assert columns[2] == ("price", "DECIMAL(10, 2)")
    assert seed_columns(ITEMS, {"name": "string"})[1] == ("name", "STRING")


def test_read_seed_converts_values() -> None:
    declared = (("price", "decimal(10,2)"), ("in_stock", "boolean"), ("added_on", "date"), ("updated_at", "timestamp"))
    seed = read_seed(ITEMS, declared)

    assert seed.column_names == ("item_id", "name", "price", "in_stock", "added_on", "updated_at", "big")
    assert seed.rows == (
        (1, "Beans, dark", Decimal("24.50"), True, date(2024, 1, 1), datetime(2024, 1, 1, 10), 3000000000.0),
        (2, " Filter ", Decimal("21"), False, date(2024, 1, 2), datetime(2024, 1, 2, 11, 30), 1.0),
        (3, None, None, None, None, None, None),
    )


def test_header_only_seed_is_an_empty_table_of_strings(tmp_path: Path) -> None:
    seed = read_seed(_csv(tmp_path, "a,b\n"), ())
    assert (seed.columns, seed.rows) == ((("a", "STRING"), ("b", "STRING")), ())


def test_mixed_values_fall_back_to_string(tmp_path: Path) -> None:
    path = _csv(tmp_path, "a,b,c\n1,2024-01-01,true\nx,2024-01-01 00:00:00,1\n")
    assert seed_columns(path, ()) == (("a", "STRING"), ("b", "STRING"), ("c", "STRING"))


def test_ragged_row_names_its_line(tmp_path: Path) -> None:
    with pytest.raises(ProjectError) as error:
        read_seed(_csv(tmp_path, 'a,b\n1,2\n"multi\nline",2\n3,4,5\n'), ())
    assert error.value.line == 5
    assert error.value.snippet == "3,4,5"
    assert "3 field(s) but the header has 2" in error.value.message


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="does not exist"):
        seed_content_hash(tmp_path / "nope.csv")


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_empty_file(tmp_path: Path, content: str) -> None:
    with pytest.raises(ProjectError, match="seed file is empty"):
        seed_columns(_csv(tmp_path, content), ())


def test_no_header(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="no header row"):
        seed_columns(_csv(tmp_path, "1,2024-01-01\n2,2024-01-02\n"), ())


def test_duplicate_header_case_insensitive(tmp_path: Path) -> None:
    with pytest.raises(ProjectError) as error:
        seed_columns(_csv(tmp_path, "id,name,ID\n1,a,2\n"), ())
    assert (error.value.line, error.value.col) == (1, 9)
    assert "duplicate column 'id'" in error.value.message


def test_non_utf8_names_line_and_column(tmp_path: Path) -> None:
    with pytest.raises(ProjectError) as error:
        seed_columns(_csv(tmp_path, b"id,name\n1,ok\n2,caf\xe9\n"), ())
    assert (error.value.line, error.value.col) == (3, 6)
    assert "not valid UTF-8" in error.value.message


def test_value_not_matching_declared_type(tmp_path: Path) -> None:
    with pytest.raises(ProjectError) as error:
        read_seed(_csv(tmp_path, "id,ds\n1,2024-01-01\n2,2024-13-01\n"), (("ds", "date"),))
    assert (error.value.line, error.value.col) == (3, 3)
    assert "'2024-13-01' of column ds is not a valid DATE" in error.value.message


def test_declared_column_missing_from_header(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="declared column\\(s\\) other not in the CSV header"):
        seed_columns(_csv(tmp_path, "id\n1\n"), (("other", "int"),))


def test_bad_declared_type(tmp_path: Path) -> None:
    with pytest.raises(ProjectError, match="invalid column type 'numbr'"):
        seed_columns(_csv(tmp_path, "id\n1\n"), (("id", "numbr"),))


def test_bom_is_ignored(tmp_path: Path) -> None:
    assert seed_columns(_csv(tmp_path, b"\xef\xbb\xbfid\n1\n"), ()) == (("id", "BIGINT"),)


def test_pandas_missing_markers_are_null_as_sqlmesh_loads_them(tmp_path: Path) -> None:
    # SQLMesh reads seeds with pandas, whose default na_values make these cells NULL (quoted or not, in a declared
    # STRING column too): a user's zone lookup had "N/A" service zones that SQLMesh's models saw as NULL.
    seed = tmp_path / "regions.csv"
    seed.write_text('id,code,label,n\n1,NA,North America,1\n2,N/A,n/a,nan\n3,NULL,null,NULL\n4,None,nan,2\n'
                    '5,NaN,#N/A,3\n6,<NA>,-nan,4\n7,EU,,5\n8,AF,"NA",6\n9, NA,Nan,7\n')
    data = read_seed(seed, {"label": "STRING"})
    assert dict(data.columns) == {"id": "BIGINT", "code": "STRING", "label": "STRING", "n": "DOUBLE"}  # missing cells: float64
    codes = [row[1] for row in data.rows]
    labels = [row[2] for row in data.rows]
    assert codes == [None, None, None, None, None, None, "EU", "AF", " NA"]  # a marker is the whole cell
    assert labels == ["North America", None, None, None, None, None, None, None, "Nan"]
    assert [row[3] for row in data.rows] == [1, None, None, 2, 3, 4, 5, 6, 7]


def test_a_seed_with_missing_markers_gets_a_new_content_hash_and_others_keep_theirs(tmp_path: Path) -> None:
    plain, marked = tmp_path / "plain.csv", tmp_path / "marked.csv"
    plain.write_text("id,code\n1,EU\n")
    marked.write_text("id,code\n1,NA\n")
    assert seed_content_hash(plain) == hashlib.sha256(plain.read_bytes()).hexdigest()
    assert seed_content_hash(marked) != hashlib.sha256(marked.read_bytes()).hexdigest()


def test_a_column_without_a_name_is_named_as_sqlmesh_reads_it(tmp_path) -> None:
    # pandas' to_csv writes its index under an empty header cell; SQLMesh's pandas names it "Unnamed: 0".
    data = read_seed(_csv(tmp_path, ",key,id\n0,KJI96,PR1\n1,DPV74,PR2\n"))
    assert dict(data.columns) == {"unnamed: 0": "BIGINT", "key": "STRING", "id": "STRING"}
    assert [row[1:] for row in data.rows] == [("KJI96", "PR1"), ("DPV74", "PR2")]
