MODEL (
  name shop.summary,
  kind FULL
);

SELECT SUM(total) AS grand_total, COUNT(*) AS days FROM shop.daily
