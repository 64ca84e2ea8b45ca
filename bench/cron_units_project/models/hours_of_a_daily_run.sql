MODEL (
  name s.hours_of_a_daily_run,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 6),
  cron '@daily',
  interval_unit 'hour',
  start '2024-02-10'
);

SELECT ts, CAST(@start_ts AS STRING) AS batch_start
FROM (SELECT explode(sequence(TIMESTAMP'2024-02-09 00:00:00', TIMESTAMP'2024-02-16 00:00:00', INTERVAL 1 HOUR)) AS ts) AS hours
WHERE ts BETWEEN @start_ts AND @end_ts
