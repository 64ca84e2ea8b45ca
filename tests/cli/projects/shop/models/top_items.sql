MODEL (
  name shop.top_items,
  kind VIEW
);

SELECT item_id, SUM(amount) AS amount FROM shop.items GROUP BY item_id
