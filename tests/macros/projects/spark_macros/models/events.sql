MODEL (name mac_raw.events, kind FULL);

SELECT
  CAST(date_day AS STRING) AS ds,
  id,
  IF(id % 2 = 0, 'a', 'b') AS category,
  id * 10 AS amount,
  id AS version
FROM (@DATE_SPINE('day', '2024-01-01', '2024-01-05')) AS days
LATERAL VIEW EXPLODE(SEQUENCE(1, 4)) ids AS id
