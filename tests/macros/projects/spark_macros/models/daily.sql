MODEL (
  name mac_shop.daily,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds, batch_size 1),
  owner @VAR('owner', 'analytics'),
);

@DEF(divisor, 2);

SELECT
  ds,
  @GENERATE_SURROGATE_KEY(ds, 'daily') AS key,
  @EACH(@categories, c -> SUM(IF(category = c, amount, 0)) AS amount_@c),
  @SAFE_DIV(SUM(amount), @divisor) AS half,
  @IF(@start_ds >= '2024-01-03', 'late', 'early') AS phase
FROM mac_raw.events
WHERE @in_interval(ds)
GROUP BY ds
