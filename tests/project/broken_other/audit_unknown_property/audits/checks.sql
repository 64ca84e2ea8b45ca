AUDIT (
  name assert_positive,
  blockin false
);
SELECT * FROM @this_model WHERE amount < 0
