-- The catalog's recorded layout and relidash version, compared at each open with this
-- relidash's (written once, not at every open). One row: (key, value) per key present.
SELECT key, value FROM meta WHERE key IN ('schema_version', 'relidash_version')
