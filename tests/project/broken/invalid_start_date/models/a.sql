MODEL (
  name db.a,
  start '2024-02-30'
);
SELECT 1 AS id
