-- Reads every row of one table, so that DuckDB checks each of its blocks' checksums now
-- (it checks a block only when a query reads it). One row: a hash, not used.
-- Template: "{table}" is a table name read from the catalog (quoted by fill_template).
SELECT max(hash(t)) FROM "{table}" AS t
