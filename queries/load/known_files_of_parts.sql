-- known_files of many listing parts, by each path's part (its top-level directory, '' for
-- a file at the top: dashboard/data/sources/walk.py part_of, in SQL).
-- One row: (path, size, mtime_ns, racy, etag). $parts: the parts.
SELECT path, size, mtime_ns, racy, etag FROM files
WHERE CASE WHEN contains(path, '/') THEN split_part(path, '/', 1) ELSE '' END
      IN (SELECT unnest($parts))
