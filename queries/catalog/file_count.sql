-- How many report files the catalog records. One row: (n).
SELECT count(*) AS n FROM files
