-- Keeps the catalog's dictionary for summary entries, once: every entry is compressed
-- against it for the catalog's lifetime. $data: the dictionary's bytes.
INSERT INTO record_dictionary VALUES ($data)
