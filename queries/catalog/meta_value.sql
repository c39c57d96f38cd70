-- One key of `meta`. One row, or none when the key is not set: (value). $key: the key.
SELECT value FROM meta WHERE key = $key
