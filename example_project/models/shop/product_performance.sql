MODEL (
  name shop.product_performance,
  kind FULL,
  grain product_id,
  owner 'merchandising',
  audits (
    not_null(columns := (product_id, category)),
    unique_values(columns := (product_id))
  )
);

SELECT
  p.product_id,
  p.product_name,
  p.category,
  COALESCE(SUM(f.quantity), 0) AS units_sold,
  COALESCE(SUM(CASE WHEN f.status <> 'returned' THEN f.amount END), 0) AS revenue,
  CAST(SUM(CASE WHEN f.status = 'returned' THEN 1 ELSE 0 END) AS DOUBLE) / NULLIF(COUNT(f.order_id), 0) AS return_rate
FROM staging.products AS p
LEFT JOIN shop.fct_orders AS f
  ON p.product_id = f.product_id
GROUP BY
  p.product_id,
  p.product_name,
  p.category
