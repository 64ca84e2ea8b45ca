MODEL (
  name shop.daily,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds),
  grain ds
);

SELECT ds, SUM(amount) AS total, COUNT(*) AS orders
FROM raw.events
WHERE ds BETWEEN @start_ds AND @end_ds
GROUP BY ds
