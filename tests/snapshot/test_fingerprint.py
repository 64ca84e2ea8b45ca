from pathlib import Path

import pytest

from dagster_sparkmesh.model import AuditCall, ExternalModel, Model
from dagster_sparkmesh.snapshot.fingerprint import chain_fingerprints, data_hash, metadata_hash


def _model(name: str, query: str, parents: tuple[str, ...] = (), **fields) -> Model:
    fields.setdefault("kind", {"name": "FULL"})
    return Model(
        name=name, source="sql", path=Path(f"{name}.sql"), query=query, depends_on=frozenset(parents), **fields
    )


def _project(**overrides: Model) -> dict[str, Model]:
    models = {
        "shop.raw": _model("shop.raw", "SELECT 1 AS id"),
        "shop.mid": _model("shop.mid", "SELECT id FROM shop.raw", ("shop.raw",)),
        "shop.top": _model("shop.top", "SELECT id FROM shop.mid", ("shop.mid",)),
    }
    models.update({name.replace("__", "."): model for name, model in overrides.items()})
    return chain_fingerprints(models, {})


def test_pinned_fingerprints_catch_accidental_hashing_changes():
    fingerprints = {name: model.fingerprint for name, model in _project().items()}
    assert fingerprints == {
        "shop.raw": "fb0df1ba078810ca124377eae685be86ea098eebded09aa527be7650ca7bdc91",
        "shop.mid": "df0825d89da288efad242f617bc00d4838e157de0697868499a204e6c636ccd9",
        "shop.top": "ae94450066bc2ba3069092e3551b63c2bcef5a352d19c028c60899f8b6299ee2",
    }


def test_scd_type_2_models_keep_the_data_hashes_of_the_release_before_their_forward_only_default():
    """Hashes computed by the release before SCD type 2 kinds became forward-only (e9f840a): a project's history
    tables are not rebuilt by the upgrade. A history that does not write ``disable_restatement`` gets a new
    metadata hash (its default changed, so its restatements did); one that writes ``false`` keeps it."""
    before = "f3a30d45559012e3b7789dff7289deb24986595b969bb4e34087798f47c28441"
    kinds = {
        "by_time": ({"name": "SCD_TYPE_2_BY_TIME", "unique_key": ("id",)}, "492cb61f2c6074389be77aad020986ac04b389f09664279b13da1c29bb46304e"),
        "by_column": ({"name": "SCD_TYPE_2_BY_COLUMN", "unique_key": ("id",), "columns": ("v",)},
                      "44299a7b100aef23783b7e513124f53f0844716922bfaeddbb3ad7898af4fd12"),
    }
    for kind, data in kinds.values():
        history = _model("s.h", "SELECT id, v, updated_at FROM s.src", ("s.src",), kind=kind)
        assert data_hash(history) == data
        assert metadata_hash(history) != before
        restated = _model("s.h", "SELECT id, v, updated_at FROM s.src", ("s.src",), kind={**kind, "disable_restatement": False})
        assert (data_hash(restated), metadata_hash(restated)) == (data, before)


def test_parent_data_change_changes_every_descendant():
    before = _project()
    after = _project(shop__raw=_model("shop.raw", "SELECT 2 AS id"))
    assert all(before[name].fingerprint != after[name].fingerprint for name in before)


def test_child_change_leaves_parents_alone():
    before = _project()
    after = _project(shop__top=_model("shop.top", "SELECT id + 1 AS id FROM shop.mid", ("shop.mid",)))
    assert before["shop.raw"].fingerprint == after["shop.raw"].fingerprint
    assert before["shop.mid"].fingerprint == after["shop.mid"].fingerprint
    assert before["shop.top"].fingerprint != after["shop.top"].fingerprint


@pytest.mark.parametrize(
    "metadata",
    [
        {"owner": "ana"},
        {"description": "raw ids"},
        {"cron": "@hourly"},
        {"tags": ("pii",)},
        {"grains": ("id",)},
        {"audits": (AuditCall(name="not_null", args=(("columns", "(id)"),)),)},
        {"kind": {"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds", "batch_size": 7}},
    ],
)
def test_metadata_changes_move_only_the_metadata_hash(metadata):
    base_kind = metadata.get("kind", {"name": "FULL"})
    if "batch_size" in base_kind:
        baseline = _model("shop.raw", "SELECT 1 AS id", kind={"name": "INCREMENTAL_BY_TIME_RANGE", "time_column": "ds"})
    else:
        baseline = _model("shop.raw", "SELECT 1 AS id")
    changed = baseline.model_copy(update=_as_fields(metadata))
    assert data_hash(changed) == data_hash(baseline)
    assert metadata_hash(changed) != metadata_hash(baseline)
    before = chain_fingerprints({"shop.raw": baseline}, {})["shop.raw"]
    after = chain_fingerprints({"shop.raw": changed}, {})["shop.raw"]
    assert before.fingerprint == after.fingerprint


def _as_fields(metadata: dict) -> dict:
    if "kind" in metadata:
        from dagster_sparkmesh.model import IncrementalByTimeRangeKind

        return {"kind": IncrementalByTimeRangeKind(**{k: v for k, v in metadata["kind"].items() if k != "name"})}
    return metadata


@pytest.mark.parametrize(
    "data_change",
    [
        {"query": "SELECT 1 AS id, 2 AS extra"},
        {"columns": (("id", "INT"),)},
        {"partitioned_by": ("id",)},
        {"pre_statements": ("SET spark.sql.ansi.enabled = true",)},
        {"post_statements": ("ANALYZE TABLE @this_model COMPUTE STATISTICS",)},
    ],
)
def test_data_changes_move_the_fingerprint(data_change):
    baseline = _model("shop.raw", "SELECT 1 AS id")
    changed = baseline.model_copy(update=data_change)
    before = chain_fingerprints({"shop.raw": baseline}, {})["shop.raw"]
    after = chain_fingerprints({"shop.raw": changed}, {})["shop.raw"]
    assert before.fingerprint != after.fingerprint


def test_external_schema_change_moves_readers():
    reader = _model("shop.orders", "SELECT id FROM raw.events", ("raw.events",))

    def fingerprint_with(columns):
        external = ExternalModel(name="raw.events", columns=columns, path=Path("external_models.yaml"))
        return chain_fingerprints({"shop.orders": reader}, {"raw.events": external})["shop.orders"].fingerprint

    assert fingerprint_with((("id", "INT"),)) != fingerprint_with((("id", "BIGINT"),))


def test_models_out_of_topological_order_are_refused():
    models = {"shop.mid": _model("shop.mid", "SELECT id FROM shop.raw", ("shop.raw",))}
    with pytest.raises(ValueError, match="topological"):
        chain_fingerprints(models, {})
