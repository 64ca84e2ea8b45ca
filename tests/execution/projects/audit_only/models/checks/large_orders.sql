MODEL (
  name checks.large_orders,
  kind AUDIT_ONLY (
    blocking FALSE,  -- only warns
    max_failing_rows 2
  ),
  cron '@daily',
  tags ['validation']
);

SELECT order_id, amount FROM bistro.orders WHERE amount > 100
