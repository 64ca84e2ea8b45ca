MODEL (
  name raw.orders,
  kind SEED (
    path '../../seeds/raw_orders.csv'
  ),
  columns (
    order_id INT,
    customer_id INT,
    product_id INT,
    quantity INT,
    status STRING,
    ordered_at TIMESTAMP
  ),
  grain order_id,
  description 'One row per order line, January 2024.'
);
