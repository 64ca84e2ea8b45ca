MODEL (
  name bistro.orders,
  kind FULL
);

SELECT order_id, order_id % 3 + 1 AS customer_id, order_id * 2.5 AS amount
FROM (SELECT UNNEST([1, 2, 3, 4, 5, 6]) AS order_id) AS ids
