MODEL (
  name raw.products,
  kind SEED (
    path '../../seeds/raw_products.csv'
  ),
  columns (
    product_id INT,
    product_name STRING,
    category STRING,
    unit_price DECIMAL(10, 2)
  ),
  grain product_id,
  description 'The product catalogue with current prices.'
);
