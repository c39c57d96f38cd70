-- Macros the ingest queries share. Run once per connection.
-- json_truthy(j): Python truthiness of a JSON value (null, false, 0, "", [], {} are false),
-- as upstream tests `metadata.get("skipped")`.
CREATE OR REPLACE TEMP MACRO json_truthy(j) AS
    coalesce(j IS NOT NULL AND CAST(j AS VARCHAR) NOT IN ('null', 'false', '0', '0.0', '-0.0', '""', '[]', '{}'), false);
