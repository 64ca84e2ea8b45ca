MODEL (
  name ss_shop.top_waiters,
  audits (
    unique_values(columns := waiter_id)
  ),
  grain waiter_id
);

SELECT
  waiter_id::INT AS waiter_id,
  revenue::DOUBLE AS revenue,
  @ADD_ONE(1) AS two,
  @AS_TEXT(revenue) AS revenue_text
FROM ss_shop.waiter_revenue_by_day
WHERE
  event_date = (
    SELECT MAX(event_date) FROM ss_shop.waiter_revenue_by_day
  )
ORDER BY
  revenue DESC
LIMIT 10
