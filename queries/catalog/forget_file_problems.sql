-- Forgets the problems recorded of these files. $paths: the files, few.
DELETE FROM problems WHERE list_contains($paths, file)
