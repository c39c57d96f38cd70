-- Macros the ingest queries share. Run once per connection.
-- json_truthy(j): Python truthiness of a JSON value (null, false, 0, "", [], {} are false),
-- as upstream tests `metadata.get("skipped")`.
CREATE OR REPLACE TEMP MACRO json_truthy(j) AS
    coalesce(j IS NOT NULL AND CAST(j AS VARCHAR) NOT IN ('null', 'false', '0', '0.0', '-0.0', '""', '[]', '{}'), false);
-- num_text(x): a number as a person writes it (4, not 4.0).
CREATE OR REPLACE TEMP MACRO num_text(x) AS
    CASE WHEN x IS NULL THEN 'null'
         WHEN isfinite(x) AND x = floor(x) AND abs(x) < 1e15 THEN CAST(CAST(x AS BIGINT) AS VARCHAR)
         ELSE CAST(x AS VARCHAR) END;
