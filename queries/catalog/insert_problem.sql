-- One problem that keeps a file, a report or a case out (run once per problem, with
-- executemany). ?, ?, ?: the file, the scope ('file', 'report' or 'case') and the reason.
INSERT INTO problems VALUES (?, ?, ?)
