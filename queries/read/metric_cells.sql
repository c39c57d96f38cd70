-- Each report's stored default-policy metrics and lottery cases as the text json.dumps
-- writes for the "pass_at_k", "pass_hat_k" and "lottery" values of its summary entry
-- (dashboard/analysis/summary.py report_records): {"k": {"value", "ci_low", "ci_high",
-- "unknown_reason"}}, k ascending up to the report's k_max (greatest($min_k_max,
-- runs_per_case)), and [{"case_id", "input", "passes", "runs"}] in lottery rank order.
-- Exact because DuckDB writes a DOUBLE as Python's repr writes the same float (the
-- shortest text that reads back to it, in the same notation; tests/test_summary_text.py)
-- and to_json quotes text without control characters as json.dumps(ensure_ascii=False)
-- does. A report with a value that is not finite, or a reason, case id or input holding
-- a control character (escaped in other words), has no row: Python builds its cells.
-- $report_ids: the reports wanted; $at, $hat: the two metrics' names.
WITH cells AS (
    SELECT
        m.report_id, m.metric, m.k,
        '"' || m.k || '": {"value": ' || coalesce(CAST(nullif(m.value, 'NaN') AS VARCHAR), 'null')
            || ', "ci_low": ' || coalesce(CAST(nullif(m.ci_low, 'NaN') AS VARCHAR), 'null')
            || ', "ci_high": ' || coalesce(CAST(nullif(m.ci_high, 'NaN') AS VARCHAR), 'null')
            || ', "unknown_reason": '
            || CASE WHEN coalesce(m.unknown_reason, '') = '' THEN 'null'
                    ELSE CAST(to_json(m.unknown_reason) AS VARCHAR) END
            || '}' AS cell,
        NOT (isinf(coalesce(m.value, 0)) OR isinf(coalesce(m.ci_low, 0))
             OR isinf(coalesce(m.ci_high, 0)))
            AND NOT regexp_matches(coalesce(m.unknown_reason, ''), '[\x00-\x1f]') AS exact
    FROM metrics AS m JOIN reports AS r USING (report_id)
    WHERE m.report_id IN (SELECT unnest($report_ids))
      AND m.k <= greatest($min_k_max, coalesce(r.runs_per_case, $min_k_max))
),
metric_texts AS (
    SELECT
        report_id,
        '{' || coalesce(string_agg(cell, ', ' ORDER BY k) FILTER (WHERE metric = $at), '') || '}' AS pass_at_k,
        '{' || coalesce(string_agg(cell, ', ' ORDER BY k) FILTER (WHERE metric = $hat), '') || '}' AS pass_hat_k
    FROM cells
    GROUP BY report_id
    HAVING bool_and(exact)
),
lottery_items AS (
    SELECT
        l.report_id, l.rank,
        '{"case_id": ' || coalesce(CAST(to_json(c.case_id) AS VARCHAR), 'null')
            || ', "input": ' || coalesce(CAST(to_json(c.input) AS VARCHAR), 'null')
            || ', "passes": ' || coalesce(CAST(c.c AS VARCHAR), 'null')
            || ', "runs": ' || coalesce(CAST(c.n AS VARCHAR), 'null') || '}' AS item,
        NOT regexp_matches(coalesce(c.case_id, '') || coalesce(c.input, ''), '[\x00-\x1f]') AS exact
    FROM lottery AS l JOIN cases AS c USING (report_id, case_idx)
    WHERE l.report_id IN (SELECT unnest($report_ids))
),
lotteries AS (
    SELECT report_id, '[' || string_agg(item, ', ' ORDER BY rank) || ']' AS lottery,
           bool_and(exact) AS exact
    FROM lottery_items
    GROUP BY report_id
)
SELECT m.report_id, m.pass_at_k, m.pass_hat_k, coalesce(l.lottery, '[]') AS lottery
FROM metric_texts AS m LEFT JOIN lotteries AS l USING (report_id)
WHERE coalesce(l.exact, true)
