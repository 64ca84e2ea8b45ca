MODEL (name db.x, kind FULL);
SELECT id FROM db.y
