MODEL (
  name ss_shop.customers,
  kind FULL,
  grain customer_id,
);

CREATE SCHEMA IF NOT EXISTS ss_raw;
CREATE TABLE IF NOT EXISTS ss_raw.demographics AS (
  SELECT 1 AS customer_id, '00000' AS zip
);

SELECT DISTINCT
  o.customer_id::INT AS customer_id,
  d.zip,
  IF(o.customer_id = 1, 'active', 'inactive') AS status
FROM ss_shop.orders AS o
LEFT JOIN ss_raw.demographics AS d
  ON o.customer_id = d.customer_id
