-- Files whose bytes may have changed between their digest and their parse lose their
-- digest and are marked racy, so the next load parses them again: $paths (a list).
UPDATE files SET digest = '', racy = true WHERE path IN (SELECT unnest($paths))
