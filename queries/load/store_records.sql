-- Keeps reports' summary entries, compressed, in one statement (a statement per row costs
-- its overhead each time). $ids, $records: parallel lists (report id, compressed entry).
INSERT INTO report_records SELECT unnest($ids), unnest($records)
