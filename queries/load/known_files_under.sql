-- known_files of one listing part, by the prefix of its paths: a prefix comparison lets
-- DuckDB skip row groups by their min and max. One row: (path, size, mtime_ns, racy, etag).
-- $prefix: the part's directory and a slash.
SELECT path, size, mtime_ns, racy, etag FROM files WHERE starts_with(path, $prefix)
