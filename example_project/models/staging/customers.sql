MODEL (
  name staging.customers,
  kind VIEW,
  grain customer_id,
  description 'Customers with trimmed, lower-case emails and upper-case ISO country codes.'
);

SELECT
  customer_id,
  first_name,
  LOWER(TRIM(email)) AS email,
  UPPER(country) AS country,
  signup_date
FROM raw.customers
