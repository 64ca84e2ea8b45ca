-- Three-part name in a catalog that is not spark_catalog: the catalog is folded into the schema.
MODEL (
  name shopcat.bronze.raw_orders,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds)
);

SELECT d.ds, i.id AS order_id, i.id AS customer_id, i.id * 10 AS amount
FROM (SELECT explode(sequence(DATE'2024-01-01', DATE'2024-01-05', INTERVAL 1 DAY)) AS ds) AS d
CROSS JOIN (SELECT explode(sequence(1, 2)) AS id) AS i
WHERE d.ds BETWEEN @start_ds AND @end_ds
