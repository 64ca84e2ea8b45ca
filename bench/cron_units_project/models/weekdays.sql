MODEL (
  name s.weekdays,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 1),
  cron '30 2 * * 1-5',
  start '2024-01-03'
);

SELECT ds, CAST(@start_ds AS STRING) AS batch_start
FROM (SELECT explode(sequence(DATE'2023-12-25', DATE'2024-02-20', INTERVAL 1 DAY)) AS ds) AS days
WHERE ds BETWEEN @start_ds AND @end_ds
