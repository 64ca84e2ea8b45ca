MODEL (name shop.bad, kind FULL);
SELECT id,
FROM shop.ok WHERE
