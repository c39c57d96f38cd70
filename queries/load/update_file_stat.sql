-- A recorded file whose bytes are unchanged takes its new size, mtime, racy flag and
-- ETag: $path, $size, $mtime_ns, $racy, $etag.
UPDATE files SET size = $size, mtime_ns = $mtime_ns, racy = $racy, etag = $etag
WHERE path = $path
