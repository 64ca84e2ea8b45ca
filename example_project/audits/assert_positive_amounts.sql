-- An order line that costs nothing (or less) is a pricing bug upstream: stop the pipeline before it spreads.
AUDIT (
  name assert_positive_amounts
);

SELECT *
FROM @this_model
WHERE amount <= 0
