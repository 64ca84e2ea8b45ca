-- A standalone audit: reads two models by name, returns the days whose totals disagree.
AUDIT (
  name daily_matches_events,
  standalone true,
  description 'every daily total is the sum of its events'
);
SELECT d.ds, d.total, e.total AS events_total
FROM shop.daily AS d
JOIN (
  SELECT ds, SUM(amount) AS total FROM raw.events WHERE ds BETWEEN @start_ds AND @end_ds GROUP BY ds
) AS e ON d.ds = e.ds
WHERE d.total <> e.total
