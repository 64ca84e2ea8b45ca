MODEL (
  name shop.daily,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds),
  end '2024-01-05',
  grain ds,
  audits (not_null(columns := (ds, total)))
);

SELECT ds, SUM(amount) AS total, COUNT(*) AS orders
FROM raw.events
WHERE ds BETWEEN @start_ds AND @end_ds
GROUP BY ds
