MODEL (name db.a, kind FULL);
SELECT
  @add_one(id) AS id
FROM db.b
