/* Jinja inside string literals, without a JINJA block, in the hive dialect. */
MODEL (
  name ss_shop.customer_revenue_by_day,
  kind incremental_by_time_range (
    time_column event_date,
    batch_size 10,
  ),
  dialect hive,
  grain (customer_id, event_date),
);

SELECT
  o.customer_id::INT AS customer_id,
  SUM(oi.quantity * oi.price)::DOUBLE AS revenue,
  o.event_date::DATE AS event_date
FROM ss_shop.orders AS o
LEFT JOIN ss_shop.order_items AS oi
  ON o.id = oi.order_id AND o.event_date = oi.event_date
WHERE
  o.event_date BETWEEN CAST('{{ start_ds }}' as DATE) AND CAST('{{ end_ds }}' as DATE)
GROUP BY
  o.customer_id,
  o.event_date
