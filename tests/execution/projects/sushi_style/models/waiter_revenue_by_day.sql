MODEL (
  name ss_shop.waiter_revenue_by_day,
  kind incremental_by_time_range (
    time_column event_date
  ),
  audits (
    not_null(columns := (waiter_id)),
    forall(criteria := (LENGTH(waiter_name) > 0))
  )
);

JINJA_QUERY_BEGIN;

SELECT
  o.waiter_id AS waiter_id,
  wn.name AS waiter_name,
  {{ alias('SUM(oi.quantity * oi.price)', 'revenue') }},
  o.event_date AS event_date
FROM ss_shop.orders AS o
JOIN ss_shop.order_items AS oi ON o.id = oi.order_id AND o.event_date = oi.event_date
JOIN ss_shop.waiter_names AS wn ON o.waiter_id = wn.id
WHERE @incremental_by_day(o.event_date)
GROUP BY o.waiter_id, wn.name, o.event_date;

JINJA_END;
