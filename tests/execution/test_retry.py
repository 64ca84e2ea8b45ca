"""Transient failures are retried with backoff, a bounded number of times; SQL errors are not retried at all."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import pytest
from pyspark.errors import PySparkException

from dagster_sparkmesh.engine.adapter import SparkEngine
from dagster_sparkmesh.engine.failures import spark_errors
from dagster_sparkmesh.engine.table_creation import TableCreation
from dagster_sparkmesh.errors import AuditFailure, EngineError
from dagster_sparkmesh.execution.apply import apply_plan
from dagster_sparkmesh.execution.plans import plan_for
from dagster_sparkmesh.execution.retry import RetryPolicy, is_transient, with_retries

DERBY_LOCK = "java.sql.SQLTransactionRollbackException: ERROR 40XL1: A lock could not be obtained within the time requested"
LOST_SESSION = "[INVALID_HANDLE.SESSION_NOT_FOUND] The handle 1b2c is invalid. Session not found. SQLSTATE: HY000"


def wrapped(message: str) -> EngineError:
    """How the engine reports a Spark failure: an EngineError, judged by the engine, whose cause is Spark's."""
    try:
        with spark_errors("SELECT 1"):
            raise PySparkException(message)
    except EngineError as error:
        return error


class Flaky:
    def __init__(self, failures: list[BaseException]) -> None:
        self.failures = failures
        self.calls = 0

    def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "done"


def test_transient_failures_are_retried_with_growing_delays():
    slept: list[float] = []
    action = Flaky([wrapped(DERBY_LOCK), wrapped(LOST_SESSION)])
    policy = RetryPolicy(attempts=3, delay_seconds=1.0, backoff=3.0)
    assert with_retries(action, policy, sleep=slept.append) == "done"
    assert action.calls == 3
    assert slept == [1.0, 3.0]


def test_retries_are_bounded_and_the_last_error_surfaces():
    slept: list[float] = []
    action = Flaky([wrapped(DERBY_LOCK) for _ in range(5)])
    with pytest.raises(EngineError, match="40XL1"):
        with_retries(action, RetryPolicy(attempts=3, delay_seconds=10, max_delay_seconds=15), sleep=slept.append)
    assert action.calls == 3
    assert slept == [10, 15]


def test_real_sql_errors_are_never_retried(engine):
    slept: list[float] = []
    calls = []

    def query_missing_table():
        calls.append(1)
        engine.catalog.query_rows("SELECT * FROM no_such_schema.no_such_table")

    with pytest.raises(EngineError) as caught:
        with_retries(query_missing_table, RetryPolicy(attempts=5, delay_seconds=0), sleep=slept.append)
    assert not is_transient(caught.value)
    assert len(calls) == 1 and slept == []


def test_audit_failures_and_unknown_errors_are_permanent():
    assert not is_transient(AuditFailure("blocking audit not_null found 2 offending row(s)"))
    assert not is_transient(ValueError("something else"))
    assert is_transient(wrapped("<_InactiveRpcError: StatusCode.UNAVAILABLE details = 'failed to connect to all addresses'>"))


class LockedOnce(TableCreation):
    """The real table creation, except that its first interval write meets a metastore lock timeout."""

    def __init__(self, catalog, layouts) -> None:
        super().__init__(catalog, layouts)
        self.failed = 0

    def write_first_interval(self, *args, **kwargs) -> int | None:  # the first write of a new table
        if self.failed == 0:
            self.failed += 1
            raise wrapped(DERBY_LOCK)
        return super().write_first_interval(*args, **kwargs)


def _locked_once(spark) -> tuple[SparkEngine, LockedOnce]:
    engine = SparkEngine(spark)
    engine.creation = LockedOnce(engine.catalog, engine.layouts)
    return engine, engine.creation


def test_apply_retries_a_write_that_met_a_lock_timeout(spark, mini_project, make_context):
    engine, locked = _locked_once(spark)
    ctx = dataclasses.replace(
        make_context(mini_project), engine_factory=lambda: engine, retry_policy=RetryPolicy(delay_seconds=0)
    )
    plan = plan_for(ctx, datetime(2024, 1, 1), datetime(2024, 1, 4))
    apply_plan(ctx, plan)
    assert locked.failed == 1
    assert spark.sql("SELECT COUNT(*) FROM shop.daily").collect()[0][0] == 3
    assert ctx.state.get_intervals("shop.daily", plan.version_of("shop.daily"))[-1].end == datetime(2024, 1, 4)


def test_an_error_from_a_python_model_is_judged_by_the_engine_too():
    """A user's DataFrame code raises Spark's own exception; the executor reports it without an EngineError."""
    try:
        try:
            raise RuntimeError(LOST_SESSION)
        except RuntimeError as cause:
            raise ValueError("Python model shop.py_model raised RuntimeError") from cause
    except ValueError as error:
        assert is_transient(error)
