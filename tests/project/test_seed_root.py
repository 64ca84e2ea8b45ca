"""``$root`` in a seed path is the project folder, as in SQLMesh."""

from __future__ import annotations

from pathlib import Path

from dagster_sparkmesh import load_project


def test_root_prefix_in_a_seed_path(tmp_path: Path):
    (tmp_path / "models" / "sub").mkdir(parents=True)
    (tmp_path / "seeds").mkdir()
    (tmp_path / "config.yaml").write_text("model_defaults:\n  dialect: spark\n")
    (tmp_path / "seeds" / "people.csv").write_text("id,name\n1,a\n")
    (tmp_path / "models" / "sub" / "people.sql").write_text(
        "MODEL (name db.people, kind SEED (path '$root/seeds/people.csv'));\n"
    )
    model = load_project(tmp_path, use_cache=False).models["db.people"]
    assert model.kind.path == "../../seeds/people.csv"
    assert model.columns == (("id", "BIGINT"), ("name", "STRING"))
