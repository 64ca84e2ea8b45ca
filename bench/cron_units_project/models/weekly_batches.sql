MODEL (
  name s.weekly_batches,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 2),
  cron '@weekly',
  start '2024-01-03'
);

SELECT ds, CAST(@start_ds AS STRING) AS batch_start, CAST(@end_ds AS STRING) AS batch_end
FROM (SELECT explode(sequence(DATE'2023-12-25', DATE'2024-02-20', INTERVAL 1 DAY)) AS ds) AS days
WHERE ds BETWEEN @start_ds AND @end_ds
