-- Makes an attached database the connection's default, so that queries name its tables
-- alone (a cursor starts in the empty in-memory database).
-- Template: {database} is its name, a constant of dashboard/data/load/snapshot.py.
USE {database}
