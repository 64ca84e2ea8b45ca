MODEL (
  name staging.orders,
  kind VIEW,
  grain order_id,
  description 'Order lines with the day they were placed (ds), the time column of every daily fact.'
);

SELECT
  order_id,
  customer_id,
  product_id,
  quantity,
  LOWER(status) AS status,
  ordered_at,
  CAST(ordered_at AS DATE) AS ds
FROM raw.orders
