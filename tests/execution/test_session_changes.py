"""Which session state a model's statements change (pure)."""

from pathlib import Path

import pytest

from dagster_sparkmesh.execution.session_changes import TIME_ZONE_KEY, SessionChanges, session_changes
from dagster_sparkmesh.model.records import Model


def _model(*pre: str, post: tuple[str, ...] = ()) -> Model:
    return Model(
        name="shop.m", kind={"name": "FULL"}, source="sql", path=Path("models/m.sql"), query="SELECT 1 AS n",
        pre_statements=pre, post_statements=post,
    )


@pytest.mark.parametrize(
    "pre, post, changes",
    [
        ((), (), SessionChanges()),
        (("CREATE TABLE IF NOT EXISTS a.b (n INT)",), (), SessionChanges()),
        (("SET spark.sql.ansi.enabled = false",), (), SessionChanges(keys=("spark.sql.ansi.enabled",), alone=True)),
        (("set spark.sql.x=1",), ("RESET spark.sql.x",), SessionChanges(keys=("spark.sql.x",), alone=True)),
        (("SET TIME ZONE 'Europe/Paris'",), (), SessionChanges(keys=(TIME_ZONE_KEY,), alone=True)),
        (("USE scratch",), (), SessionChanges(namespace=True, alone=True)),
        (("DECLARE VARIABLE v INT DEFAULT 1",), (), SessionChanges(alone=True)),
        (("SET VAR v = 2",), (), SessionChanges(alone=True)),
    ],
)
def test_session_changes(pre, post, changes):
    assert session_changes(_model(*pre, post=post)) == changes
