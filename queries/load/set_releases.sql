-- Stores each listed report's release, where it came from and its rank in its suite.
-- $ids, $releases, $sources, $ranks: parallel lists, one element per report.
UPDATE reports SET release = u.release, release_source = u.source, release_rank = u.rank
FROM (
    SELECT unnest($ids) AS report_id, unnest($releases) AS release,
           unnest($sources) AS source, unnest($ranks) AS rank
) AS u
WHERE reports.report_id = u.report_id
