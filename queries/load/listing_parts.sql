-- The listing-part digests the last complete load stored (none while a load runs).
-- One row: (part, digest).
SELECT part, digest FROM listing_parts
