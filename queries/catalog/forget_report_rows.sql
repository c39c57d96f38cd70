-- Forgets one table's rows of these reports.
-- Template: {table} is one of REPORT_TABLES (dashboard/data/catalog/schema.py).
-- $report_ids: the reports.
DELETE FROM {table} WHERE list_contains($report_ids, report_id)
