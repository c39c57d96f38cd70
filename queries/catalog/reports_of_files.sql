-- The reports loaded from these files (one file may hold several), before their rows are
-- forgotten. One row: (report_id, suite). $paths: the files, few (a filter on the column
-- lets DuckDB skip row groups by their min and max).
SELECT report_id, suite FROM reports WHERE list_contains($paths, file)
