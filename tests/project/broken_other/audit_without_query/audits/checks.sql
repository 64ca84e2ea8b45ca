AUDIT (name assert_positive, defaults (threshold = 0));
SELECT * FROM @this_model WHERE amount < @threshold;

AUDIT (
  name assert_recent
);
