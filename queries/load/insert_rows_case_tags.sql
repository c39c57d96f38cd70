-- Adds one row per tag of the samples of a batch of Inspect logs to `case_tags`, split as
-- insert_case_tags.sql splits multivon-eval's: `key:value` at the first colon.
-- $report_id, $case_idx, $tag: one list each, one element per tag.
INSERT INTO case_tags
SELECT report_id, case_idx, tag,
       CASE WHEN contains(tag, ':') THEN split_part(tag, ':', 1) ELSE 'tag' END AS dim,
       CASE WHEN contains(tag, ':') THEN substr(tag, strpos(tag, ':') + 1) ELSE tag END AS value
FROM (
    SELECT CAST(unnest($report_id) AS INTEGER) AS report_id,
           CAST(unnest($case_idx) AS INTEGER) AS case_idx, CAST(unnest($tag) AS VARCHAR) AS tag
)
