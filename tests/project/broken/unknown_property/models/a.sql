MODEL (
  name db.a,
  kidn FULL
);
SELECT 1 AS id
