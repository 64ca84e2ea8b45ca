MODEL (name db.a, kind FULL);
SELECT o.id
FROM orders o
JOIN raw.customers c ON c.id = o.id
