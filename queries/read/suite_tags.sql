-- The tags any case of one suite carries, in any release. One row: one distinct tag.
-- $suite: the suite name. From case_tags, one row per tag of a case, which the load
-- fills from every format's cases (insert_case_tags.sql, insert_rows_case_tags.sql).
SELECT DISTINCT t.tag
FROM case_tags AS t JOIN reports AS r USING (report_id)
WHERE r.suite = $suite
ORDER BY t.tag
