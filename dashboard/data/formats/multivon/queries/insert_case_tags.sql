-- Adds one row per tag of each staged case to `case_tags`: `key:value` tags split at the
-- first colon into (dim, value); a plain tag gets dim 'tag'. No parameters.
INSERT INTO case_tags
SELECT report_id, case_idx, tag,
       CASE WHEN contains(tag, ':') THEN split_part(tag, ':', 1) ELSE 'tag' END AS dim,
       CASE WHEN contains(tag, ':') THEN substr(tag, strpos(tag, ':') + 1) ELSE tag END AS value
FROM (SELECT report_id, case_idx, unnest(tags) AS tag FROM stage_cases)
WHERE tag IS NOT NULL
