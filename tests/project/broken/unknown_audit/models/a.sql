MODEL (
  name s.a,
  kind FULL,
  audits (not_nul(columns := (x)))
);
SELECT 1 AS x
