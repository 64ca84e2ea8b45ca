MODEL (
  name shop.big_days
);

SELECT ds, total FROM shop.daily WHERE total > 0
