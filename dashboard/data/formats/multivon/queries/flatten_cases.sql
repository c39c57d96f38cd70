-- stage_cases.sql's rows stored into a table of the staging database, by a stager's cursor
-- ahead of the batch's store (the store reads them on its own connection).
-- Template: {table} is one of stager.py's allow-listed names.
CREATE OR REPLACE TABLE {table} AS
{>formats/multivon/stage_cases}
