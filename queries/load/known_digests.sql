-- The recorded digest of each listed path that has one. One row: (path, digest).
-- $paths: the paths.
SELECT path, digest FROM files WHERE path IN (SELECT unnest($paths))
