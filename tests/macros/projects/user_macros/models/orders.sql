MODEL (name shop.orders, kind FULL, owner @VAR('owner_name', 'me'));

SELECT 1 AS id, 'truck' AS vehicle, 20 AS amount, DATE '2024-01-01' AS ds
