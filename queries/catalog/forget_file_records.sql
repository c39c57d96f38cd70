-- Forgets the catalog's record of these files. $paths: the files, few.
DELETE FROM files WHERE list_contains($paths, path)
