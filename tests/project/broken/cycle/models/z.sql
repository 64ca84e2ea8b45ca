MODEL (name db.z, kind FULL);
SELECT id FROM db.x
