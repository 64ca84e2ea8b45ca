"""Snapshot identities, fingerprints and the names of physical tables and views."""
