-- Forgets every problem recorded of one file (relidash.toml's, found afresh each load).
-- $file: the file's path as listed.
DELETE FROM problems WHERE file = $file
