"""What checks a project's data: audits (attached and standalone) and unit tests."""
