-- How many report files and problems a catalog served as it is holds, for the load result
-- it is shown with. One row: (files, problems).
SELECT (SELECT count(*) FROM files) AS files, (SELECT count(*) FROM problems) AS problems
