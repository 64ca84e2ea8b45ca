MODEL (name DB.A, kind FULL);
SELECT 2 AS id
