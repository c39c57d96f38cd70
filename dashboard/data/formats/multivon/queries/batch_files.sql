-- The temp table `batch_files`: the files of one batch the staged rows are read for, by
-- path as listed, absolute path, report id and mtime.
-- $paths, $abspaths, $ids, $mtimes: parallel lists, one element per file.
CREATE OR REPLACE TEMP TABLE batch_files AS
SELECT unnest($paths) AS path, unnest($abspaths) AS abspath,
       CAST(unnest($ids) AS INTEGER) AS report_id, CAST(unnest($mtimes) AS BIGINT) AS mtime_ns
