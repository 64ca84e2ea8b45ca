-- The default catalog is dropped: this model is gold.revenue.
MODEL (
  name spark_catalog.gold.revenue,
  kind FULL
);

SELECT region, SUM(amount) AS revenue
FROM `shopcat`.`silver`.`orders`
GROUP BY region
