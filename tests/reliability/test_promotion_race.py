"""Racing promotions of one environment never leave it half-promoted or mixed (architecture invariant 7).

Two plans built from the same promoted plan are backfilled, then promoted at the same moment from two threads
sharing the local session, each with its own state store connection. Every model returns its plan's tag as data,
so a reader querying the views during the race tells which plan each view showed. After each view swap the
swapping thread waits until the reader read every view once more: readers run between all swaps, and the second
promotion surely arrives while the first one swaps.
"""

from __future__ import annotations

import re
import textwrap
import threading
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy as sa

from dagster_sparkmesh.dagster import SparkMeshResource, build_sparkmesh_specs, promotion_key, sparkmesh_assets
from dagster_sparkmesh.dagster.promotion import promotion_asset
from dagster_sparkmesh.errors import StateConflictError
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.context import ExecutionContext
from dagster_sparkmesh.execution.promotion import promote
from dagster_sparkmesh.plan.definition import Plan
from dagster_sparkmesh.project.loader import load_project
from dagster_sparkmesh.snapshot.naming import physical_table
from dagster_sparkmesh.state import LeaseHolder, open_state_store
from tests.cli.sparkmesh_harness import invoke

pytestmark = pytest.mark.every_layout  # `./dev test` runs it again on Iceberg and Delta tables

MODELS = ("race.alpha", "race.beta", "race.gamma")
START, END = datetime(2024, 1, 1), datetime(2024, 1, 3)
EXECUTION_TIME = datetime(2024, 1, 3)
READ_TIMEOUT_SECONDS = 30
POSTGRES_URL = "postgresql+psycopg2://postgres@127.0.0.1:5432/test"
# A live process that is not this one: a lease it holds can only be taken over after it expires.
OTHER_LIVE_HOLDER = LeaseHolder(user="ann", host=LeaseHolder.current().host, pid=1)


def write_project(folder: Path, tags: dict[str, str]) -> Path:
    """One model per name in MODELS, each returning its tag (default ``v0``) in column ``plan``.

    VIEW models: their physical objects are views, so a backfill is a few cheap DDL statements, while promoting
    them swaps the environment's views exactly as for tables."""
    (folder / "models").mkdir(parents=True)
    (folder / "config.yaml").write_text("model_defaults:\n  dialect: spark\n  start: '2024-01-01'\n")
    for name in MODELS:
        table = name.split(".")[1]
        sql = f"""
            MODEL (name {name}, kind VIEW);

            SELECT '{tags.get(table, "v0")}' AS plan, explode(sequence(1, 3)) AS id
            """
        (folder / "models" / f"{table}.sql").write_text(textwrap.dedent(sql))
    return folder


@pytest.fixture(params=["sqlite", "postgres"])
def state(request, tmp_path: Path):
    """(url, schema) of one state store shared by every project of a test."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'state.db'}", None
        return
    schema = f"race_{uuid.uuid4().hex[:12]}"
    yield POSTGRES_URL, schema
    engine = sa.create_engine(POSTGRES_URL)
    with engine.begin() as connection:
        connection.exec_driver_sql(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    engine.dispose()


@pytest.fixture
def make_context(engine, state):
    contexts: list[ExecutionContext] = []

    def make(project_dir: Path) -> ExecutionContext:
        url, schema = state
        ctx = ExecutionContext(
            project=load_project(project_dir, use_cache=False),
            state=open_state_store(url, project_dir, schema=schema),
            environment="prod",
            engine_factory=lambda: engine,
            clock=lambda: EXECUTION_TIME,
        )
        contexts.append(ctx)
        return ctx

    yield make
    for ctx in contexts:
        ctx.state.close()


def _backfilled(ctx: ExecutionContext) -> Plan:
    plan = plan_for(ctx, START, END)
    apply_plan(ctx, plan, promote_after=False)
    return plan


def _promoted(ctx: ExecutionContext) -> Plan:
    plan = plan_for(ctx, START, END)
    apply_plan(ctx, plan)
    return plan


# A view swap: ``ALTER VIEW``, or on a session serving Iceberg (whose views refuse it) ``CREATE OR REPLACE VIEW``.
_SWAPS = ("ALTER VIEW", "CREATE OR REPLACE VIEW")


class SlowViewSwaps:
    """Records which thread ran each view swap and calls ``after_swap``; ``fail_at``: raise at that swap."""

    def __init__(self, engine, *, after_swap: Callable[[], None] = lambda: None, fail_at: int | None = None) -> None:
        self.engine, self.after_swap, self.fail_at = engine, after_swap, fail_at
        self.swaps: list[tuple[str, str]] = []
        self._execute: Callable[[str], None] = engine.catalog.execute

    def __enter__(self) -> SlowViewSwaps:
        self.engine.catalog.execute = self._run
        return self

    def __exit__(self, *_exc: object) -> None:
        del self.engine.catalog.execute

    def _run(self, sql: str) -> None:
        if not sql.startswith(_SWAPS):
            self._execute(sql)
            return
        if len(self.swaps) + 1 == self.fail_at:
            raise RuntimeError("the connection to the catalog was lost")  # not a SparkMeshError: a crash
        self._execute(sql)
        self.swaps.append((threading.current_thread().name, sql))
        self.after_swap()


class ViewReader(threading.Thread):
    """Queries every view in a loop until stopped; keeps each view's values and every error."""

    def __init__(self, spark) -> None:
        super().__init__(name="reader", daemon=True)
        self.spark = spark
        self.seen: dict[str, set[str]] = {name: set() for name in MODELS}
        self.errors: list[str] = []
        self.reads = 0
        self._progress = threading.Condition()
        self._stop_reading = threading.Event()

    def run(self) -> None:
        while not self._stop_reading.is_set():
            for name in MODELS:
                try:
                    self.seen[name] |= {row[0] for row in self.spark.sql(f"SELECT DISTINCT plan FROM {name}").collect()}
                except Exception as error:  # noqa: BLE001 - any failed read is what this test looks for
                    self.errors.append(f"{name}: {error}")
                with self._progress:
                    self.reads += 1
                    self._progress.notify_all()

    def read_every_view_once_more(self) -> None:
        with self._progress:
            target = self.reads + len(MODELS)
            self._progress.wait_for(lambda: self.reads >= target or not self.is_alive(), timeout=READ_TIMEOUT_SECONDS)

    def stop(self) -> None:
        self._stop_reading.set()
        self.join(timeout=60)


def _race(contestants: dict[str, tuple[ExecutionContext, Plan]]) -> dict[str, object]:
    """Promote every plan at once, one thread each (named after the tag); the result or the error per tag."""
    start = threading.Barrier(len(contestants))
    outcomes: dict[str, object] = {}

    def run(tag: str) -> None:
        ctx, plan = contestants[tag]
        start.wait()
        try:
            outcomes[tag] = promote(ctx, plan)
        except Exception as error:  # noqa: BLE001 - the loser's error is asserted on below
            outcomes[tag] = error

    threads = [threading.Thread(target=run, args=(tag,), name=tag) for tag in contestants]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return outcomes


def _view_targets(spark) -> dict[str, str]:
    """The table each view selects from, read from the catalog's view text."""
    targets = {}
    for name in MODELS:
        text = spark.sql(f"SHOW CREATE TABLE {name}").collect()[0][0]
        targets[name] = re.search(r"FROM\s+(\S+)", text).group(1).replace("`", "")
    return targets


def _physical_tables(plan: Plan) -> dict[str, str]:
    return {s.name: physical_table(s.name, s.version) for s in plan.environment_after.snapshots}


def test_racing_promotions_one_wins_the_other_touches_no_view_readers_never_fail(
    tmp_path, spark, engine, clean_catalog, make_context
):
    base = _promoted(make_context(write_project(tmp_path / "base", {})))
    a, b = (make_context(write_project(tmp_path / tag, dict.fromkeys(("alpha", "beta", "gamma"), tag))) for tag in "ab")
    plans = {"a": (a, _backfilled(a)), "b": (b, _backfilled(b))}
    assert {plan.previous_plan_id for _, plan in plans.values()} == {base.plan_id}

    reader = ViewReader(spark)
    reader.start()
    reader.read_every_view_once_more()
    with SlowViewSwaps(engine, after_swap=reader.read_every_view_once_more) as recorder:
        reads_before = reader.reads
        outcomes = _race(plans)
        reads_during_race = reader.reads - reads_before
    reader.stop()

    winner = next(tag for tag, outcome in outcomes.items() if not isinstance(outcome, Exception))
    loser = "b" if winner == "a" else "a"
    winning_plan = plans[winner][1]
    assert isinstance(outcomes[loser], StateConflictError), outcomes[loser]
    assert f"environment prod is being promoted by plan {winning_plan.plan_id} (" in str(outcomes[loser])
    # Views are swapped by worker threads named after the promoting thread.
    assert [thread.split("-views")[0] for thread, _ in recorder.swaps] == [winner] * len(MODELS), "the loser touched a view"
    assert _view_targets(spark) == _physical_tables(winning_plan)
    assert {name: {row[0] for row in spark.sql(f"SELECT plan FROM {name}").collect()} for name in MODELS} == {
        name: {winner} for name in MODELS
    }
    state = plans[winner][0].state
    assert state.get_environment("prod").plan_id == winning_plan.plan_id
    assert state.get_promotion_lease("prod") is None
    assert [e.plan_id for e in state.environment_history("prod")] == [base.plan_id]
    assert reader.errors == []
    # Every swap waited for a read of every view after it (swaps running side by side may share one).
    assert reads_during_race >= len(MODELS) * 2, "the reader read every view after every swap"
    assert all(seen <= {"v0", winner} for seen in reader.seen.values()), reader.seen


@pytest.mark.parametrize("state", ["sqlite"], indirect=True)  # the lease marker itself: both backends in tests/state
def test_after_a_promotion_died_mid_swap_the_next_plan_repoints_every_view(
    tmp_path, spark, engine, clean_catalog, make_context
):
    base = _promoted(make_context(write_project(tmp_path / "base", {})))
    crashed = make_context(write_project(tmp_path / "a", dict.fromkeys(("alpha", "beta", "gamma"), "a")))
    crashed_plan = _backfilled(crashed)
    crashed.max_workers = 1  # one view at a time: the failure comes after exactly one swap
    with SlowViewSwaps(engine, fail_at=2) as recorder, pytest.raises(RuntimeError, match="connection"):
        promote(crashed, crashed_plan)
    assert len(recorder.swaps) == 1
    assert {row[0] for row in spark.sql("SELECT plan FROM race.alpha").collect()} == {"a"}, "one view was swapped"
    assert crashed.state.get_promotion_lease("prod").views_touched

    # The next plan changes gamma only: alpha's record is unchanged, yet its view points at the failed plan's table.
    only_gamma = make_context(write_project(tmp_path / "b", {"gamma": "b"}))
    result = promote(only_gamma, _backfilled(only_gamma))
    assert result.previous_plan_id == base.plan_id
    assert sorted(change.model for change in result.views) == list(MODELS)
    assert {name: spark.sql(f"SELECT DISTINCT plan FROM {name}").collect()[0][0] for name in MODELS} == {
        "race.alpha": "v0", "race.beta": "v0", "race.gamma": "b"
    }
    assert only_gamma.state.get_promotion_lease("prod") is None


def test_the_cli_and_the_dagster_asset_report_a_held_lease_clearly(tmp_path, spark, engine, clean_catalog):
    project = write_project(tmp_path / "cli", {"alpha": "c"})
    with open_state_store(None, project) as store:
        held = store.acquire_promotion_lease("prod", "other-plan", holder=OTHER_LIVE_HOLDER)

    result, _ = invoke(project, ["plan", "prod", "--auto-apply", "--no-prompts", "--end", "2024-01-02"], engine)
    assert result.exit_code == 2, result.output
    assert "environment prod is being promoted by plan other-plan (ann@" in result.output
    assert "hint: no view was changed: wait for that promotion to finish" in result.output
    assert not spark.catalog.databaseExists("race"), "no view may be created without the lease"

    loaded = load_project(project, use_cache=False)
    specs = build_sparkmesh_specs(loaded)
    warehouse = spark.sparkContext.getConf().get("spark.sql.warehouse.dir")
    resource = SparkMeshResource(project_dir=str(project), spark_config={"spark.sql.warehouse.dir": warehouse})
    with dg.instance_for_test() as instance:
        run = dg.materialize(
            [*sparkmesh_assets(project=loaded, specs=specs), promotion_asset(loaded, specs)],
            selection=[promotion_key("prod")],
            resources={"sparkmesh": resource},
            instance=instance,
            raise_on_error=False,
        )
    assert not run.success
    failure = next(event for event in run.all_events if event.is_step_failure)
    assert "environment prod is being promoted by plan other-plan" in failure.step_failure_data.error.message
    with open_state_store(None, project) as store:
        assert store.get_promotion_lease("prod") == held
        assert store.get_environment("prod") is None
