import typing as t
from datetime import datetime

import pandas as pd
from helper import iter_dates  # type: ignore

from sqlmesh import ExecutionContext, model
from sqlmesh.core.model import IncrementalByTimeRangeKind


@model(
    "ss_shop.orders",
    kind=IncrementalByTimeRangeKind(time_column="event_date", batch_size=30),
    columns={"id": "int", "customer_id": "int", "waiter_id": "int", "event_date": "date"},
)
def execute(context: ExecutionContext, start: datetime, end: datetime, execution_time: datetime, **kwargs: t.Any):
    # Two orders a day: customer 1 served by waiter 0, customer 2 by waiter 1.
    return pd.DataFrame(
        [
            {"id": day.day * 10 + customer, "customer_id": customer, "waiter_id": customer - 1, "event_date": day.date()}
            for day in iter_dates(start, end)
            for customer in (1, 2)
        ]
    )
