MODEL (
  name @name,
  kind FULL,
  grain status,
  blueprints (
    (
      name := ss_shop.count_customers_active,
      blueprint_status := 'active',
    ),
    (
      name := ss_shop.count_customers_inactive,
      blueprint_status := 'inactive',
    )
  )
);

SELECT COUNT(customer_id) AS count_customers
FROM ss_shop.customers
WHERE status = @blueprint_status;
