MODEL (name db.b, kind FULL);
SELECT id
  FROM db.a
