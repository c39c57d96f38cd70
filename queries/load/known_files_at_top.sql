-- known_files of the listing part '': the files at the top of the source.
-- One row: (path, size, mtime_ns, racy, etag). No parameters.
SELECT path, size, mtime_ns, racy, etag FROM files WHERE NOT contains(path, '/')
