-- Drops the problems the last load's walk found (walk_problems.sql), before this load
-- records its own.
DELETE FROM problems
WHERE scope = 'file'
    AND file NOT IN (
        SELECT path FROM files WHERE path IN (SELECT file FROM problems WHERE scope = 'file')
    )
