MODEL (
  name db.a,
  columns (id INT, amount MONEYBAGS(3))
);
SELECT 1 AS id, 2 AS amount
