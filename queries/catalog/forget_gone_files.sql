-- Forgets the catalog's record of the files in `gone_files`. No parameters.
DELETE FROM files WHERE path IN (SELECT path FROM gone_files)
