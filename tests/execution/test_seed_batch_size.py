"""``batch_size`` on a SEED kind (SQLMesh's rows per INSERT) loads, is metadata only, and changes no row."""

from datetime import datetime

from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.snapshot.fingerprint import data_hash

CSV = "id,name,price\n1,beans,2.5\n2,filter,\n3,mug,7.25\n4,kettle,30\n5,scale,12\n"


def _seed_project(project, batch_size: str) -> None:
    (project / "seeds").mkdir()
    (project / "seeds" / "items.csv").write_text(CSV)
    (project / "models" / "items.sql").write_text(
        f"MODEL (name shop.items, kind SEED (path '../seeds/items.csv'{batch_size}));\n"
    )
    (project / "models" / "items_copy.sql").write_text(
        "MODEL (name shop.items_copy, kind SEED (path '../seeds/items.csv'));\n"
    )


def test_a_seed_with_batch_size_loads_the_same_rows(spark, mini_project, make_context):
    _seed_project(mini_project, ", batch_size 2")
    ctx = make_context(mini_project)
    batched, plain = ctx.project.models["shop.items"], ctx.project.models["shop.items_copy"]
    assert batched.kind.batch_size == 2
    assert data_hash(batched.model_copy(update={"name": plain.name})) == data_hash(plain)  # metadata only

    apply_plan(ctx, plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 2)))
    rows = {name: spark.sql(f"SELECT * FROM {name} ORDER BY id").collect() for name in ("shop.items", "shop.items_copy")}
    assert rows["shop.items"] == rows["shop.items_copy"]
    assert [tuple(row) for row in rows["shop.items"]][:2] == [(1, "beans", 2.5), (2, "filter", None)]
