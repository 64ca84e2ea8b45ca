MODEL (
  name db.a,
  cron '@fortnightly'
);
SELECT 1 AS id
