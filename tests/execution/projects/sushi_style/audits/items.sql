AUDIT (
  name assert_quantity_above,
);
SELECT * FROM @this_model WHERE quantity <= @quantity
