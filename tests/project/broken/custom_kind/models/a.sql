MODEL (
  kind CUSTOM (materialization 'my_package.SCDType4'),
  name db.history
);
SELECT 1 AS id
