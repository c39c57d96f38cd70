-- A file catalog is not checkpointed when its last connection closes: small changes stay
-- in the write-ahead log until DuckDB's threshold (set_checkpoint_threshold.sql) or
-- settle_catalog checkpoints them, since a checkpoint at every exit rewrites the large
-- tables' last row groups. No parameters.
PRAGMA disable_checkpoint_on_shutdown
