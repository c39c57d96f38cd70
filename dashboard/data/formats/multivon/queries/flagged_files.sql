-- The strictly parsed files whose text holds NaN or Infinity, which a strict JSON parse
-- then settles (multivon-eval refuses such a literal). One row: (filename). Reads `stage`.
SELECT DISTINCT filename FROM stage WHERE maybe_constants
