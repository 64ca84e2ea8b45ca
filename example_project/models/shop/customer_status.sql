MODEL (
  name shop.customer_status,
  kind INCREMENTAL_BY_UNIQUE_KEY (
    unique_key customer_id
  ),
  grain customer_id,
  description 'The most recent order of each customer: every interval upserts the customers who ordered in it.',
  audits (
    unique_values(columns := (customer_id)),
    not_null(columns := (customer_id, last_order_id))
  )
);

WITH ranked AS (
  SELECT
    customer_id,
    order_id,
    status,
    ordered_at,
    ds,
    ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY ordered_at DESC, order_id DESC) AS recency
  FROM staging.orders
  WHERE
    ds BETWEEN @start_ds AND @end_ds
)
SELECT
  customer_id,
  order_id AS last_order_id,
  status AS last_order_status,
  ordered_at AS last_ordered_at,
  ds AS last_order_ds
FROM ranked
WHERE
  recency = 1
