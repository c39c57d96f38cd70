-- The temp view `stage`: the rows of a batch's staged tables, by column name. A view, not
-- a copy: the statements that read it read the parsed rows where they are. The framed
-- rows' maybe_constants is NULL (they were checked before), and the JSON reader's rows
-- have none.
-- Template: {sources} are the staged tables, allow-listed names (stage_json and
-- staging.py's), read in turn and joined by name.
CREATE OR REPLACE TEMP VIEW stage AS
SELECT * FROM {sources: UNION ALL BY NAME SELECT * FROM }
