MODEL (
  name staging.web_events,
  kind VIEW,
  grain event_id
);

SELECT
  event_id,
  customer_id,
  event_type,
  event_ts,
  CAST(event_ts AS DATE) AS ds
FROM raw.web_events
