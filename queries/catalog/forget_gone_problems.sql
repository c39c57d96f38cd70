-- Forgets the problems recorded of the files in `gone_files`. No parameters.
DELETE FROM problems WHERE file IN (SELECT path FROM gone_files)
