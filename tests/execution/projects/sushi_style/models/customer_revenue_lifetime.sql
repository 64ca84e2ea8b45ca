/* Reads its own earlier days. */
MODEL (
  name ss_shop.customer_revenue_lifetime,
  kind incremental_by_time_range (
    time_column event_date,
    batch_size 1
  ),
  columns (
    customer_id INT,
    revenue DOUBLE,
    event_date DATE
  ),
  grain (customer_id, event_date),
);

WITH today AS (
  SELECT customer_id, revenue
  FROM ss_shop.customer_revenue_by_day
  WHERE event_date = @end_date
), prev_total AS (
  SELECT crl.customer_id, crl.revenue
  FROM ss_shop.customer_revenue_lifetime AS crl
  WHERE crl.event_date = @end_date - INTERVAL 1 DAY
)
SELECT
  COALESCE(t.customer_id, p.customer_id) AS customer_id,
  COALESCE(t.revenue, 0) + COALESCE(p.revenue, 0) AS revenue,
  @end_date AS event_date
FROM today AS t
FULL OUTER JOIN prev_total AS p
  ON t.customer_id = p.customer_id
