MODEL (
  name shop.report,
  kind INCREMENTAL_BY_TIME_RANGE (time_column ds),
  start '2024-01-01',
);

@DEF(threshold, @min_amount * 2);

SELECT
  id,
  @make_indicators(vehicle, [truck, bus]),
  @double_it(21) AS answer,
  @print_text() AS t,
  ds
FROM @table_of('orders')
WHERE @between_where(amount, @threshold - 10, 100) AND @since_start(ds)
