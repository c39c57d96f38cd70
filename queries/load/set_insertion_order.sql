-- Lets DuckDB write rows in any order (false), or keep their order again (true).
-- $preserve: the setting, a boolean.
SET preserve_insertion_order = $preserve
