AUDIT (
  name big_totals,
  standalone true,
  blocking false
);
SELECT * FROM shop.daily WHERE total > 1000
