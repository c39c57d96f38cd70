-- Drops every stored listing-part digest: a load of a source the catalog did not
-- describe compares every part.
DELETE FROM listing_parts
