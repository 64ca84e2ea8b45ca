MODEL (
  name db.a,
  kind FULL
);

SELECT id,
FROM db.b
WHERE (id > 1
