-- The recorded files of the harnesses named in $harnesses (a list), and every recorded
-- file nothing loaded from: what a load reads again when those harnesses' tables of
-- relidash.toml moved. One row: (path).
SELECT f.path
FROM files f
LEFT JOIN reports r USING (report_id)
WHERE f.report_id IS NULL OR list_contains($harnesses, r.harness)
