MODEL (name db.b, kind FULL);
SELECT 1 AS id
