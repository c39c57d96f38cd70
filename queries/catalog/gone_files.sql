-- The temp table `gone_files`: files whose rows are forgotten by a join (many files, where
-- a filter per file would cost more than reading every row group). $paths: the files.
CREATE OR REPLACE TEMP TABLE gone_files AS SELECT unnest($paths) AS path
