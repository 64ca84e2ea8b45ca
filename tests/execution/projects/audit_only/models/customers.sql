MODEL (
  name bistro.customers,
  kind FULL
);

SELECT id AS customer_id, CONCAT('guest ', CAST(id AS TEXT)) AS guest
FROM (SELECT UNNEST([1, 2, 3]) AS id) AS ids
