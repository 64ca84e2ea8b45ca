MODEL (
  name gold.top_region,
  kind VIEW
);

SELECT region FROM spark_catalog.gold.revenue ORDER BY revenue DESC LIMIT 1
