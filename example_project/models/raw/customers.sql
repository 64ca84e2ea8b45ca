MODEL (
  name raw.customers,
  kind SEED (
    path '../../seeds/raw_customers.csv'
  ),
  columns (
    customer_id INT,
    first_name STRING,
    email STRING,
    country STRING,
    signup_date DATE
  ),
  grain customer_id,
  description 'Customers as exported by the shop backend (emails untrimmed, country codes in mixed case).'
);
