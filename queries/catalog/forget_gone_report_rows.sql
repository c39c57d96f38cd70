-- Forgets one table's rows of the reports loaded from `gone_files` (`reports` itself last:
-- the others find their rows through it).
-- Template: {table} is one of REPORT_TABLES (dashboard/data/catalog/schema.py).
DELETE FROM {table}
WHERE report_id IN (SELECT report_id FROM reports WHERE file IN (SELECT path FROM gone_files))
