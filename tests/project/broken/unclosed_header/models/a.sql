MODEL (
  name db.a,
  kind FULL,
  description 'has a ) inside a string'
SELECT 1 AS id
