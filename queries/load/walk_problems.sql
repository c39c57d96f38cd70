-- The problems the last load's walk found (a directory named x.json, a symlink loop, a
-- file gone since the listing): file-scope problems of paths with no row in `files`.
-- They are found afresh each load. One row: (file, reason).
SELECT file, reason
FROM problems
WHERE scope = 'file'
    AND file NOT IN (
        SELECT path FROM files WHERE path IN (SELECT file FROM problems WHERE scope = 'file')
    )
