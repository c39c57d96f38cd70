-- Empties one table of a catalog pointed at another source, which starts over.
-- Template: {table} is one of REPORT_TABLES, files or problems (an allow-list in
-- dashboard/data/load/ingest.py).
DELETE FROM {table}
