MODEL (
  name s.monthly_days,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds),
  cron '@monthly',
  start '2024-01-03'
);

SELECT ds, CAST(@start_ds AS STRING) AS batch_start
FROM (SELECT explode(sequence(DATE'2023-12-25', DATE'2024-03-20', INTERVAL 1 DAY)) AS ds) AS days
WHERE ds BETWEEN @start_ds AND @end_ds
