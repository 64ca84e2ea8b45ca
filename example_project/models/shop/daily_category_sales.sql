MODEL (
  name shop.daily_category_sales,
  kind INCREMENTAL_BY_TIME_RANGE (
    time_column ds
  ),
  grain (ds, category),
  tags (daily),
  audits (
    not_null(columns := (ds, category)),
    accepted_values(column := category, is_in := ('coffee', 'tea', 'equipment', 'supplies', 'merchandise'))
  )
);

SELECT
  ds,
  category,
  SUM(quantity) AS units,
  SUM(amount) AS gross_amount
FROM shop.fct_orders
WHERE
  ds BETWEEN @start_ds AND @end_ds
  AND status <> 'returned'
GROUP BY
  ds,
  category
