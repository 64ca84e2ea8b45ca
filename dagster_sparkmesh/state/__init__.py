"""The state store: snapshots, environments, intervals (SQLAlchemy; SQLite by default, PostgreSQL for teams)."""
