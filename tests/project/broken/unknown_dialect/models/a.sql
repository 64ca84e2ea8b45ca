MODEL (
  name db.a,
  dialect postgress
);
SELECT 1 AS id
