-- Attaches the in-memory database a load parses into (the strict parts, the framed rows,
-- the cases flattened ahead): a load's scratch rows never reach the catalog's log.
-- Template: {database} is its name, staging.py's STAGE_DATABASE.
ATTACH IF NOT EXISTS ':memory:' AS {database}
