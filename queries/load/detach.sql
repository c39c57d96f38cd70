-- Detaches an attached database, letting go of its file.
-- Template: {alias} is its name, a constant of dashboard/data/load/snapshot.py.
DETACH {alias}
