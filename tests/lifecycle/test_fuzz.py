"""The lifecycle fuzzer in the suite: a short seeded run, and every divergence it ever found, minimized.

The long run is ``bench/lifecycle_fuzz.py --sequences 100``. A regression test here is a sequence of actions
(tests/lifecycle/actions.py) played on a new copy of the project, promoted, and compared with a fresh build.
"""

from __future__ import annotations

import random

import pytest

from tests.lifecycle.actions import (
    ALL_MODELS, Crash, Edit, ForwardOnlyColumn, Janitor, PlanDev, PlanProd, RangedRun, Restate, TakenBack,
)
from tests.lifecycle.fuzzer import final_end, fuzz, generate, run_sequence


def test_sequences_are_reproducible_from_their_seed():
    assert generate(random.Random(7), 6) == generate(random.Random(7), 6)
    assert generate(random.Random(7), 6) != generate(random.Random(8), 6)


def test_the_final_promotion_covers_every_day_an_action_wrote():
    assert final_end([PlanProd(end="2024-01-03"), PlanProd(end="2024-01-12")]) == "2024-01-12"
    assert final_end([]) == "2024-01-05"


def test_a_short_seeded_run_finds_no_divergence(engine, tmp_path):
    # 2 sequences of 2 actions (an edit and plans; a ranged run ahead of prod, then a longer plan): 2-3 minutes on
    # a loaded 2-core machine, each sequence paying for its fresh build. The long run is bench/lifecycle_fuzz.py.
    report = fuzz(engine, tmp_path, sequences=2, seed=27, length=2)
    assert report.sequences == 2 and report.actions == 4
    assert [r.describe() for r in report.failures] == []


def _replay(engine, tmp_path, *actions):
    result = run_sequence(engine, tmp_path, actions)
    assert not result.failed, result.describe()


# Found by the fuzzer (seed 11, length 3), minimized. A Dagster run of days 01-09..01-13 of the source and the
# `lookback 2` model on a new project: rolling's 01-09 and 01-10 rows read the source's 01-07 and 01-08, which do
# not exist yet, and are recorded complete. The promotion computes the source's earlier days but never recomputes
# those two rows (6 and 13 events over 3 days instead of 20 and 19).
@pytest.mark.slow
def test_regression_a_ranged_run_ahead_of_the_parent_leaves_lookback_rows_stale(engine, tmp_path):
    _replay(engine, tmp_path, RangedRun(models=("m.rolling", "src.events"), start="2024-01-09", end="2024-01-13"))


# Found replaying the one above through the CLI: `plan prod --start 2024-01-09 --end 2024-01-13`, then
# `plan prod --end 2024-01-13`. Besides rolling's stale rows, the unique-key model m.latest computes the earlier
# days [01-01, 01-09) last and upserts them over the newer rows: customers' last day goes back to 01-08 or before.
@pytest.mark.slow
def test_regression_backfilling_earlier_days_keeps_the_unique_key_model_at_the_latest_day(engine, tmp_path):
    _replay(engine, tmp_path, PlanProd(start="2024-01-09", end="2024-01-13"))


# The actions issue 32 added, each once: a Python macro edit (plain, then one reading the run's interval), and a
# column added forward-only from the start. Each alone was a divergence before (the macro edit changed nothing; the
# column never reached prod).
@pytest.mark.slow
def test_macro_edits_and_a_forward_only_column_match_a_fresh_build(engine, tmp_path):
    _replay(
        engine, tmp_path,
        PlanProd(end="2024-01-04"),
        Edit(what="macro"),
        Edit(what="deferred_macro"),
        PlanProd(end="2024-01-05"),
        ForwardOnlyColumn(end="2024-01-05"),
    )


# A model renamed while a development environment still reads it, a model_defaults change (batched runs from then
# on), then the janitor: prod has the new name only, dev's views still read their tables.
@pytest.mark.slow
def test_a_rename_and_a_defaults_change_under_a_reading_environment_match_a_fresh_build(engine, tmp_path):
    _replay(
        engine, tmp_path,
        PlanProd(end="2024-01-04"),
        PlanDev(end="2024-01-04"),
        Edit(what="rename"),
        Edit(what="defaults"),
        PlanProd(end="2024-01-06"),
        Janitor(),
    )


# Found by the fuzzer (seed 20261128): a UI restatement after late data, modelled with every model of the project
# in the partition range. A FULL model is due at the run's clock, so the selection was never "complete" and nothing
# was restated. In Dagster a partition range selects the time-partitioned assets only; the modelling does so now.
@pytest.mark.slow
def test_regression_a_ui_restatement_after_late_data_reaches_prod(engine, tmp_path):
    _replay(
        engine, tmp_path,
        PlanProd(end="2024-01-06"),
        RangedRun(models=ALL_MODELS, start="2024-01-03", end="2024-01-04", restate=True, late_bonus=100),
    )


# The schema actions, each once: a forward-only column added without --effective-from and then restated from the
# start, a forward-only drop, a forward-only retype and a unique-key query repeating keys (both refused before
# writing, then taken back), and every model's start a day earlier.
@pytest.mark.slow
def test_schema_changes_refusals_and_an_earlier_start_match_a_fresh_build(engine, tmp_path):
    _replay(
        engine, tmp_path,
        PlanProd(end="2024-01-04"),
        ForwardOnlyColumn(end="2024-01-14", effective_from=False),
        TakenBack(what="retype", end="2024-01-05"),
        TakenBack(what="repeated_keys", end="2024-01-05"),
        ForwardOnlyColumn(end="2024-01-14", change="drop"),
        Edit(what="start"),
    )


# Found by the long run (seed 20261128, sequence 76): after every model's start moved a day earlier, a forward-only
# change applied from 2024-01-01 kept the old formula on 2023-12-31 by design; the fuzzer now applies forward-only
# changes from the models' start as the files say it.
@pytest.mark.slow
def test_regression_forward_only_from_a_start_moved_earlier_matches_a_fresh_build(engine, tmp_path):
    _replay(
        engine, tmp_path,
        PlanProd(end="2024-01-04"),
        Edit(what="start"),
        Edit(what="breaking"),
        ForwardOnlyColumn(end="2024-01-14"),
    )


# Found by the long run (seed 20261128, sequence 89): a promotion that died after creating its views but before
# recording the environment left a view no record named; the model was renamed next, and the view of its old name
# stayed in prod. A promotion taking over such a lease now drops the interrupted plan's views of models it lacks.
@pytest.mark.slow
def test_regression_a_view_left_by_a_crashed_promotion_goes_when_its_model_is_renamed(engine, tmp_path):
    _replay(
        engine, tmp_path,
        Crash(stage="environment_swap", count=1, end="2024-01-07"),
        Edit(what="rename"),
        PlanProd(end="2024-01-07"),
    )


# Found by the long run (seed 20261129, sequence 25), minimized. A ranged run from 01-02 and a restatement planned
# from 01-09 leave prod's unique-key table without 01-01; a dev plan over the same files shares that table (it may
# not restate it: prod reads it) and upserted 01-01's rows over the customers' later ones (last day back to 01-01).
# A write of time before the end of what the table holds now rebuilds it from one query over all of it, in order.
@pytest.mark.slow
def test_regression_a_dev_plan_filling_earlier_time_keeps_the_shared_unique_key_table_at_the_latest_day(
    engine, tmp_path
):
    _replay(
        engine, tmp_path,
        RangedRun(models=ALL_MODELS, start="2024-01-02", end="2024-01-14"),
        Restate(model="src.events", start="2024-01-09", end="2024-01-10", late_bonus=1000),
        PlanDev(end="2024-01-13"),
    )
