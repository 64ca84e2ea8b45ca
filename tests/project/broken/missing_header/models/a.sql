-- forgot the header
SELECT 1 AS id
