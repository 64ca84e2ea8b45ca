MODEL (name db.a, kind FULL);
SELECT 1 AS id
