-- Drops a table a batch was staged in, once its rows are stored or refused.
-- Template: {table} is one of staging.py's and stager.py's allow-listed names.
DROP TABLE IF EXISTS {table}
