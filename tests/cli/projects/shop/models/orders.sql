MODEL (
  name shop.orders,
  kind FULL
);

SELECT 1 AS order_id, 'a' AS item_id, 12.5 AS amount, DATE '2024-01-01' AS ds
