MODEL (
  name p.daily_reader,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds),
  cron '@daily',
  allow_partials true
);

SELECT CAST(ts AS DATE) AS ds, COUNT(*) AS moments
FROM p.days_each_hour
WHERE ts BETWEEN @start_ts AND @end_ts
GROUP BY CAST(ts AS DATE)
