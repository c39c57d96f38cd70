-- stage_cases.sql's rows stored into a temp table by the batch's store itself, inside its
-- transaction (which writes the catalog, and so may write no other database but temp).
-- Template: {table} is staging.py's allow-listed name.
CREATE OR REPLACE TEMP TABLE {table} AS
{>formats/multivon/stage_cases}
