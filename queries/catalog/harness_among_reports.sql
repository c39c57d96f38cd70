-- Whether one harness wrote any of the listed reports: a harness words its UNKNOWN reasons
-- only where it has reports, and other loads pay this one small query.
-- One row, or none. $harness: the harness's name; $ids: the reports.
SELECT 1 AS found FROM reports WHERE harness = $harness AND list_contains($ids, report_id) LIMIT 1
