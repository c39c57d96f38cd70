-- Drops the stored digests of the listing parts in $parts (a list): the parts a load may
-- change, until it is complete.
DELETE FROM listing_parts WHERE part IN (SELECT unnest($parts))
