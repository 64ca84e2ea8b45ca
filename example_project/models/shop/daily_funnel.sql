MODEL (
  name shop.daily_funnel,
  kind INCREMENTAL_BY_TIME_RANGE (
    time_column ds
  ),
  grain ds,
  tags (daily),
  description 'Website funnel per day (external clickstream) next to the orders of that day.'
);

WITH events AS (
  SELECT
    ds,
    SUM(CASE WHEN event_type = 'page_view' THEN 1 ELSE 0 END) AS page_views,
    SUM(CASE WHEN event_type = 'add_to_cart' THEN 1 ELSE 0 END) AS add_to_carts,
    SUM(CASE WHEN event_type = 'checkout' THEN 1 ELSE 0 END) AS checkouts,
    COUNT(DISTINCT customer_id) AS known_visitors
  FROM staging.web_events
  WHERE
    ds BETWEEN @start_ds AND @end_ds
  GROUP BY
    ds
)
SELECT
  e.ds,
  e.page_views,
  e.add_to_carts,
  e.checkouts,
  e.known_visitors,
  COALESCE(r.order_lines, 0) AS order_lines,
  CAST(COALESCE(r.order_lines, 0) AS DOUBLE) / NULLIF(e.page_views, 0) AS order_lines_per_page_view
FROM events AS e
LEFT JOIN shop.daily_revenue AS r
  ON e.ds = r.ds AND r.ds BETWEEN @start_ds AND @end_ds
