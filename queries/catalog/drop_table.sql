-- Drops one table of a stale or interrupted catalog, which is rebuilt from the reports.
-- Template: "{table}" is a table name read from the catalog (quoted by fill_template).
DROP TABLE "{table}"
