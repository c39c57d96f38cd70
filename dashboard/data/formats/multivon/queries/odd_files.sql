-- The staged files that hold several JSON values or no `cases` list: a report file holds
-- one object with cases. One row: (filename, n), n the file's values. Reads `stage`.
SELECT filename, count(*) AS n FROM stage GROUP BY filename
HAVING count(*) > 1 OR bool_or(cases IS NULL)
