MODEL (
  name shop.customers,
  kind FULL,
  grain customer_id,
  owner 'analytics',
  description 'One row per customer with lifetime order figures and the status of their latest order.',
  column_descriptions (
    lifetime_revenue = 'sum of the amounts of order lines not returned'
  ),
  audits (
    unique_values(columns := (customer_id)),
    not_null(columns := (customer_id, email)),
    number_of_rows(threshold := 10)
  )
);

WITH lifetime AS (
  SELECT
    customer_id,
    MIN(ds) AS first_order_ds,
    MAX(ds) AS last_order_ds,
    COUNT(*) AS lifetime_orders,
    SUM(CASE WHEN status <> 'returned' THEN amount ELSE 0 END) AS lifetime_revenue
  FROM shop.fct_orders
  GROUP BY
    customer_id
)
SELECT
  c.customer_id,
  c.first_name,
  c.email,
  c.country,
  c.signup_date,
  l.first_order_ds,
  l.last_order_ds,
  COALESCE(l.lifetime_orders, 0) AS lifetime_orders,
  COALESCE(l.lifetime_revenue, 0) AS lifetime_revenue,
  s.last_order_status
FROM staging.customers AS c
LEFT JOIN lifetime AS l
  ON c.customer_id = l.customer_id
LEFT JOIN shop.customer_status AS s
  ON c.customer_id = s.customer_id
