-- Records what a load saw of each file (size, mtime, digest, the report it loaded as,
-- whether it was racy, its ETag), in one statement: a row at a time costs a statement
-- each. $paths, $sizes, $mtimes, $digests, $ids, $racy, $etags: parallel lists, one
-- element per file.
INSERT OR REPLACE INTO files
SELECT unnest($paths), CAST(unnest($sizes) AS BIGINT), CAST(unnest($mtimes) AS BIGINT),
       CAST(unnest($digests) AS VARCHAR), CAST(unnest($ids) AS INTEGER),
       CAST(unnest($racy) AS BOOLEAN), CAST(unnest($etags) AS VARCHAR)
