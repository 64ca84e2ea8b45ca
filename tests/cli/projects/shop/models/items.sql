MODEL (
  name shop.items,
  kind EMBEDDED
);

SELECT item_id, amount FROM shop.orders WHERE amount >= @min_amount
