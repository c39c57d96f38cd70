"""Inspect AI eval logs: `.eval` archives and `.json` logs."""
