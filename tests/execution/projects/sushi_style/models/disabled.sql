MODEL (
  name ss_shop.disabled,
  enabled False,
);

SELECT 1 AS a;
