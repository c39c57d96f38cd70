-- The report files a set of reports came from, as a review binds them. One row per
-- report: its file (relative to the reports directory), its size in bytes and digest as
-- the load read them, its format and whether it was upgraded.
-- $report_ids: the reports.
SELECT r.report_id, r.file, f.size, f.digest, r.format, r.upgraded
FROM reports r
JOIN files f ON f.path = r.file
WHERE list_contains($report_ids, r.report_id)
ORDER BY r.report_id
