-- The harnesses that wrote the listed reports, each of which words its own reports'
-- UNKNOWN reasons. One row: (harness). $ids: the reports.
SELECT DISTINCT harness FROM reports WHERE list_contains($ids, report_id)
