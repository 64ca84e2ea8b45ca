MODEL (name db.a, kind FULL);
SELECT 1 AS id;

SELECT 2 AS id;
