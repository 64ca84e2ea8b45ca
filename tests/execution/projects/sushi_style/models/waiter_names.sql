MODEL (
  name ss_shop.waiter_names,
  kind SEED (
    path '../seeds/waiter_names.csv',
  ),
  grain id,
  audits (
    assert_positive_id,
    does_not_exceed_threshold(column := id, threshold := 100),
  )
);

AUDIT (
  name does_not_exceed_threshold,
);
SELECT * FROM @this_model WHERE @column >= @threshold;

AUDIT (
  name assert_positive_id,
);
SELECT * FROM @this_model WHERE id < 0;
