MODEL (
  name raw.items,
  kind SEED (
    path '../seeds/items.csv'
  ),
  columns (
    id INT,
    added_on DATE
  )
);
