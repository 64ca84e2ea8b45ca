MODEL (
  name db.a,
  kind SCD_TYPE_2 (unique_key id)
);
SELECT 1 AS id
