MODEL (
  name shop.daily_revenue,
  kind INCREMENTAL_BY_TIME_RANGE (
    time_column ds
  ),
  grain ds,
  owner 'finance',
  tags (finance, daily),
  description 'Revenue per day; returned order lines count as returns, not revenue.',
  audits (
    not_null(columns := (ds, revenue))
  )
);

SELECT
  ds,
  COUNT(*) AS order_lines,
  COUNT(DISTINCT customer_id) AS customers,
  SUM(quantity) AS units,
  SUM(CASE WHEN status <> 'returned' THEN amount ELSE 0 END) AS revenue,
  SUM(CASE WHEN status = 'returned' THEN amount ELSE 0 END) AS returned_amount
FROM shop.fct_orders
WHERE
  ds BETWEEN @start_ds AND @end_ds
GROUP BY
  ds
