-- The catalog's record of every file, compared with a listing's size, mtime and ETag.
-- One row: (path, size, mtime_ns, racy, etag).
SELECT path, size, mtime_ns, racy, etag FROM files
