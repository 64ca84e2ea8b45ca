-- An AUDIT_ONLY model: no table, its query returns the offending rows; blocking by default.
MODEL (
  name checks.orders_have_customers,
  kind AUDIT_ONLY,
  depends_on [bistro.customers],
  owner 'kitchen',
  description 'every order belongs to a known customer'
);

SELECT o.order_id, o.customer_id
FROM bistro.orders AS o
LEFT JOIN bistro.customers AS c
  ON o.customer_id = c.customer_id
WHERE c.customer_id IS NULL
