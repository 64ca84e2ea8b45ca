MODEL (
  name shop.fct_orders,
  kind INCREMENTAL_BY_TIME_RANGE (
    time_column ds
  ),
  grain order_id,
  owner 'analytics',
  tags (finance, daily),
  description 'Priced order lines, one partition per day.',
  column_descriptions (
    amount = 'quantity times the current unit price',
    ds = 'the day the order was placed'
  ),
  audits (
    not_null(columns := (order_id, customer_id, product_id, ds)),
    unique_values(columns := (order_id)),
    accepted_values(column := status, is_in := ('placed', 'shipped', 'delivered', 'returned')),
    assert_positive_amounts
  )
);

SELECT
  o.order_id,
  o.customer_id,
  o.product_id,
  p.category,
  o.quantity,
  p.unit_price,
  CAST(o.quantity * p.unit_price AS DECIMAL(12, 2)) AS amount,
  o.status,
  o.ordered_at,
  o.ds
FROM staging.orders AS o
JOIN staging.products AS p
  ON o.product_id = p.product_id
WHERE
  o.ds BETWEEN @start_ds AND @end_ds
