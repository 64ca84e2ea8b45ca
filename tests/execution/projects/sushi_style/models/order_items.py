import typing as t
from datetime import datetime

import pandas as pd
from helper import iter_dates  # type: ignore
from sqlglot import exp

from sqlmesh import ExecutionContext, model
from sqlmesh.core.model.kind import ModelKindName


@model(
    "ss_shop.order_items",
    kind=dict(name=ModelKindName.INCREMENTAL_BY_TIME_RANGE, time_column="event_date", batch_size=30),
    columns={"order_id": "int", "quantity": "int", "price": "double", "event_date": "date"},
    audits=[("assert_quantity_above", {"quantity": 0})],
)
def execute(context: ExecutionContext, start: datetime, end: datetime, execution_time: datetime, **kwargs: t.Any):
    frames = []
    for day in iter_dates(start, end):
        # SQL built with sqlglot in the engine's dialect, as SQLMesh projects do.
        orders = context.fetchdf(
            exp.select("id")
            .from_(context.table("ss_shop.orders"), dialect=context.engine_adapter.dialect)
            .where(f"event_date = CAST('{day:%Y-%m-%d}' AS DATE)"),
            quote_identifiers=True,
        )
        frames.append(
            pd.DataFrame({"order_id": orders["id"], "quantity": 2, "price": 5.0, "event_date": day.date()})
        )
    return pd.concat(frames)  # an empty day past the interval would make this raise
