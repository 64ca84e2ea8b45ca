MODEL (
  name shop.daily_flags,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds),
  end '2024-01-05'
);

SELECT ds, total > 50 AS big
FROM shop.daily
WHERE ds BETWEEN @start_ds AND @end_ds
