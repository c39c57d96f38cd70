-- The names of the database's own tables (not the connection's temporary ones): to tell a
-- catalog from somebody else's database, and to read or drop every table by name.
-- One row: (table_name).
SELECT table_name FROM duckdb_tables() WHERE NOT temporary
