"""The engine judges its failures (transient, or Spark's refusal of the statement) where it raises them."""

from __future__ import annotations

import pytest
from pyspark.errors import AnalysisException, ParseException, PySparkException

from dagster_sparkmesh.engine.failure_kinds import is_refusal, is_transient
from dagster_sparkmesh.engine.failures import spark_errors
from dagster_sparkmesh.errors import EngineError

LOST_SESSION = "[INVALID_HANDLE.SESSION_NOT_FOUND] The handle 1b2c is invalid. Session not found. SQLSTATE: HY000"


def raised(spark_error: Exception) -> EngineError:
    with pytest.raises(EngineError) as caught:
        with spark_errors("SELECT * FROM t"):
            raise spark_error
    return caught.value


def test_a_lost_session_is_transient_and_no_refusal():
    error = raised(PySparkException(LOST_SESSION))
    assert error.transient and not error.refusal


def test_an_analysis_error_is_a_refusal_with_sparks_words_and_never_transient():
    error = raised(AnalysisException("[TABLE_OR_VIEW_NOT_FOUND] The table `t` cannot be found. Connection reset"))
    assert error.refusal and not error.transient
    assert error.spark_message.startswith("[TABLE_OR_VIEW_NOT_FOUND]")
    assert error.message == f"Spark refused the statement: {error.spark_message}"
    assert raised(ParseException("[PARSE_SYNTAX_ERROR] Syntax error at or near 'FORM'")).refusal


def test_other_failures_are_neither():
    error = raised(PySparkException("[DIVIDE_BY_ZERO] Division by zero."))
    assert not error.transient and not error.refusal


def test_the_verdict_reads_the_whole_chain_without_pyspark():
    try:
        try:
            raise OSError("Broken pipe")
        except OSError as cause:
            raise RuntimeError("write failed") from cause
    except RuntimeError as error:
        assert is_transient(error) and not is_refusal(error)
