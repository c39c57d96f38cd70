-- Drops the stored summary entries of the reports in $ids (a list), whose release
-- label changed.
DELETE FROM report_records WHERE report_id IN (SELECT unnest($ids))
