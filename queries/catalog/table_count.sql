-- How many tables the database holds (temporary ones too): a database without relidash's
-- `meta` table is only made a catalog when it holds none. One row: (n).
SELECT count(*) AS n FROM duckdb_tables()
