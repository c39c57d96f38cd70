-- Keeps the digests of the listing parts the catalog now matches.
-- $parts, $digests: parallel lists.
INSERT INTO listing_parts SELECT unnest($parts), unnest($digests)
