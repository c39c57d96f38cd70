-- Takes refused files out of the batch: their staged rows are not stored.
-- $paths: the files, as listed.
DELETE FROM batch_files WHERE path IN (SELECT unnest($paths))
