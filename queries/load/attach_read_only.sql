-- Attaches a catalog file read-only (a snapshot's copy, or the catalog itself while it is
-- copied, whose shared lock keeps writers out meanwhile).
-- Template: {alias} is the attached database's name, a constant of
-- dashboard/data/load/snapshot.py. $path: the file.
ATTACH $path AS {alias} (READ_ONLY)
