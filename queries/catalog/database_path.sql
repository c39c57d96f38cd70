-- The file of the connection's current database (NULL for one in memory), whose
-- write-ahead log settle_catalog measures. One row: (path).
SELECT path FROM duckdb_databases() WHERE database_name = current_database()
