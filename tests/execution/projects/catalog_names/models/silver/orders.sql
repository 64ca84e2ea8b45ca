MODEL (
  name ShopCat.Silver.Orders,
  kind FULL,
  depends_on [shopcat.bronze.raw_orders]
);

SELECT o.order_id, o.customer_id, o.amount, c.region
FROM shopcat.bronze.raw_orders AS o
JOIN spark_catalog.crm.customers AS c ON c.customer_id = o.customer_id
