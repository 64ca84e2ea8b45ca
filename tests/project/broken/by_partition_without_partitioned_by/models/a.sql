MODEL (
  name db.by_region,
  kind INCREMENTAL_BY_PARTITION
);
SELECT 'eu' AS region, 1 AS n
