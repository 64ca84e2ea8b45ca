MODEL (
  name staging.products,
  kind VIEW,
  grain product_id
);

SELECT
  product_id,
  product_name,
  LOWER(category) AS category,
  unit_price
FROM raw.products
