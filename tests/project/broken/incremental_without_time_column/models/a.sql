MODEL (
  name db.a,
  kind INCREMENTAL_BY_TIME_RANGE (lookback 2)
);
SELECT 1 AS id
