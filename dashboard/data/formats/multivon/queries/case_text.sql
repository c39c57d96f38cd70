-- One case's last-run output and graders' verdicts, read from its report file on demand
-- (the catalog does not keep them). One row, or none when the file has no such case.
-- $file: the report's absolute path; $columns: dashboard/data/catalog/schema.py CASE_TEXT_COLUMNS;
-- $case_idx: the case's position in the file (from 1); $max_bytes: the reader's buffer.
SELECT c.output, to_json(c.evaluators) AS evaluators
FROM (
    SELECT cases[$case_idx] AS c
    FROM read_json($file, columns = $columns, format = 'auto', records = true,
                   maximum_object_size = $max_bytes)
)
WHERE c IS NOT NULL
