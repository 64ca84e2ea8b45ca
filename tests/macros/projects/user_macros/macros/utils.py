"""Helpers imported by the macro files (the project root is importable)."""

SUFFIX = "_flag"
