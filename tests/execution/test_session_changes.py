"""Whether a model's statements may change the Spark session (pure)."""

from pathlib import Path

import pytest

from dagster_sparkmesh.execution.session_changes import changes_session
from dagster_sparkmesh.model.records import Model


def _model(*pre: str, post: tuple[str, ...] = ()) -> Model:
    return Model(
        name="shop.m", kind={"name": "FULL"}, source="sql", path=Path("models/m.sql"), query="SELECT 1 AS n",
        pre_statements=pre, post_statements=post,
    )


@pytest.mark.parametrize(
    "pre, post, changes",
    [
        ((), (), False),
        (("CREATE TABLE IF NOT EXISTS a.b (n INT)",), ("INSERT INTO a.b SELECT 1",), False),
        (("SET spark.sql.ansi.enabled = FALSE",), (), True),
        ((), ("RESET",), True),
        (("SET TIME ZONE 'Europe/Paris'",), (), True),
        (("USE scratch",), (), True),
        (("DECLARE v INT = 1",), (), True),
        (("@IF(@runtime_stage = 'evaluating', SET spark.sql.x = 1)",), (), True),  # a macro may render to a SET
    ],
)
def test_changes_session(pre, post, changes):
    assert changes_session(_model(*pre, post=post)) is changes
