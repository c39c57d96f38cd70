-- Forgets the problems of one harness's table of relidash.toml, found afresh each load.
-- $file: relidash.toml's path as listed; $table: the table's name in brackets, which
-- opens each of its problems' reasons.
DELETE FROM problems WHERE file = $file AND starts_with(reason, $table)
