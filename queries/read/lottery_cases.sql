-- Lottery cases of each report at the report's own largest run count, in relidash's
-- ranking (dashboard/stats/lottery.py). One row: one lottery case.
-- $report_ids: the reports wanted, or NULL for all.
SELECT report_id, l.rank AS lottery_rank, case_idx, case_id, input, c AS passes, n AS runs
FROM lottery AS l JOIN cases USING (report_id, case_idx)
WHERE $report_ids IS NULL OR report_id IN (SELECT unnest($report_ids))
ORDER BY report_id, lottery_rank
