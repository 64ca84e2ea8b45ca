"""Applying plans: backfill scheduler, model evaluation per kind, audits, promotion, janitor (I/O: engine + state)."""
