-- Daily sales: one interval is a range of days.
MODEL (
  name shop.daily_sales,
  kind INCREMENTAL_BY_TIME_RANGE (
    time_column ds
  ),
  grain (ds)
);

SELECT
  o.ds,
  COUNT(DISTINCT e.event_id) AS events,
  SUM(o.amount) AS amount,
  @execution_ds AS computed_on
FROM shop.orders AS o
LEFT JOIN raw.events AS e
  ON e.order_id = o.order_id
WHERE o.ds BETWEEN @start_ds AND @end_ds
  AND o.item_id IN (SELECT item_id FROM shop.items)
GROUP BY o.ds
