-- Sets these keys of `meta` in one statement: each upsert has a cost of its own that
-- grows with the catalog, and a few rows cost no more than one.
-- $keys, $values: parallel lists of text.
INSERT OR REPLACE INTO meta SELECT unnest($keys), unnest($values)
