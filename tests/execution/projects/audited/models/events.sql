MODEL (
  name raw.events,
  kind FULL
);

SELECT d.ds, i.id, i.id * 10 AS amount
FROM (SELECT explode(sequence(DATE'2024-01-01', DATE'2024-01-05', INTERVAL 1 DAY)) AS ds) AS d
CROSS JOIN (SELECT explode(sequence(1, 3)) AS id) AS i
