MODEL (
  name db.a,
  kind INCREMENTAL_BY_UNIQUE_KEYS (unique_key id)
);
SELECT 1 AS id
