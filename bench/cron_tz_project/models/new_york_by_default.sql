MODEL (
  name z.new_york_by_default,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ts, batch_size 1),
  cron '@daily'
);

SELECT ts, CAST(@start_ts AS STRING) AS batch_start, CAST(@end_ts AS STRING) AS batch_end
FROM (SELECT explode(sequence(TIMESTAMP'2024-02-08 00:00:00', TIMESTAMP'2024-02-20 00:00:00', INTERVAL 30 MINUTE)) AS ts) AS moments
WHERE ts BETWEEN @start_ts AND @end_ts
