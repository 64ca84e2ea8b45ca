MODEL (name db.a, kind FULL);
SELECT 1 AS id WHERE 'EU' = @VAR('regoin')
