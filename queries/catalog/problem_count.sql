-- How many problems the catalog holds. One row: (n).
SELECT count(*) AS n FROM problems
