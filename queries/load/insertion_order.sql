-- Whether DuckDB keeps rows in insertion order (a load turns it off while it writes and
-- puts it back after). One row: (preserve).
SELECT current_setting('preserve_insertion_order') AS preserve
