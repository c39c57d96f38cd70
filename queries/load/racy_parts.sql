-- The listing parts holding a file recorded as racy (modified so close to its load that it
-- may have been mid-write): their digests are not stored, so the next load looks again.
-- A path's part is its top-level directory, '' for a file at the top
-- (dashboard/data/sources/walk.py part_of, in SQL). One row: (part). No parameters.
SELECT DISTINCT CASE WHEN contains(path, '/') THEN split_part(path, '/', 1) ELSE '' END AS part
FROM files WHERE racy
