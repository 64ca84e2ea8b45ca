MODEL (name shop.plain, kind FULL);

SELECT id FROM shop.orders
