-- Whether some report lacks its metrics (a load stopped before computing them). One row
-- when one does, none otherwise.
SELECT 1 FROM reports WHERE report_id NOT IN (SELECT report_id FROM metrics) LIMIT 1
