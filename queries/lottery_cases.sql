-- Lottery cases of every report at the report's own largest run count, in relidash's
-- ranking (dashboard/stats/lottery.py). One row: one lottery case. No parameters.
SELECT report_id, lottery_rank, case_idx, case_id, input, c AS passes, n AS runs
FROM cases
WHERE lottery_rank IS NOT NULL
ORDER BY report_id, lottery_rank
