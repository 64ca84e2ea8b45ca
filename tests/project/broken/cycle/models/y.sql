MODEL (name db.y, kind FULL);
SELECT id FROM db.x
