-- Which suite and release each of the listed report files belongs to. One row: one
-- loaded report among $files (files that loaded nothing have no row).
SELECT file, suite, release FROM reports WHERE file IN (SELECT unnest($files))
