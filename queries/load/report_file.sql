-- Where one report's file is, and what the catalog recorded of it when it was loaded, so
-- that a case's transcript is read back only from the same bytes. One row, or none when
-- the report is gone: (root, path, size, mtime_ns, etag). $report_id: the report.
SELECT m.value AS root, f.path, f.size, f.mtime_ns, f.etag
FROM files f, meta m, reports r
WHERE m.key = 'reports_dir' AND r.report_id = $report_id AND f.path = r.file
