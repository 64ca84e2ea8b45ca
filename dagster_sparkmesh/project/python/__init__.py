"""Python model files: ``@model`` options, dependencies, blueprints, audits and SQL-returning models."""
