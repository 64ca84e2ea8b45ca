MODEL (name db.a, kind FULL, enabled false);
SELECT 1 AS id
