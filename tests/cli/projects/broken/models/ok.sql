MODEL (name shop.ok, kind FULL);
SELECT 1 AS id
