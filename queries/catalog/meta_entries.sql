-- Every row of `meta`, a NULL value too: what a seed catalog says of itself (which
-- relidash wrote it, for which source, whether its load finished). One row: (key, value).
SELECT key, value FROM meta
