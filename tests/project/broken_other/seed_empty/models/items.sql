MODEL (
  name raw.items,
  kind SEED (
    path '../seeds/items.csv'
  )
);
