-- The summary entries kept from earlier loads of the listed reports, compressed.
-- One row: (report_id, record), one per listed report that has one. $ids: the reports.
SELECT r.report_id, r.record
FROM report_records r JOIN (SELECT unnest($ids) AS report_id) w USING (report_id)
