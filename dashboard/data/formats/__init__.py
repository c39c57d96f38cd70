"""Eval-log formats other than multivon-eval's, one module per harness, and how a file is
told apart by its content.

multivon-eval reports are staged by DuckDB's JSON reader (dashboard/data/ingest.py and
queries/stage_*.sql) and never pass through here. A harness module reads its own files
into the rows of the catalog's tables (reports, cases, case_tags, trials) and reads one
case's transcripts back on demand. Must not: touch DuckDB (dashboard/data/ingest_rows.py
inserts the rows), import Streamlit or Altair, or write anything.
"""

from __future__ import annotations

import re

MULTIVON = "multivon-eval"
INSPECT = "inspect-ai"
HARNESSES = (MULTIVON, INSPECT)
# The suffixes of report files, in a directory and in object storage alike; which harness
# wrote one is decided by its content (harness_of).
REPORT_SUFFIXES = (".json", ".eval")

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a local file header; an empty archive
# An Inspect JSON log opens with one of EvalLog's fields (it writes `version` first);
# a multivon-eval report opens with `suite` or `schema`.
_INSPECT_JSON_HEAD = re.compile(
    rb'^(?:\xef\xbb\xbf)?\s*\{\s*"(?:version|status|eval)"\s*:', re.DOTALL
)


def harness_of(path: str, leading: bytes) -> str:
    """Which harness wrote a file, judged from its name and first bytes.

    A zip archive, or a `.eval` file whatever it holds, is an Inspect log (or a file the
    Inspect reader says why it is not); a JSON object whose first key is one of Inspect's
    top-level fields is an Inspect JSON log; everything else is left to the multivon-eval
    path, which names what is wrong with it.
    """
    if leading.startswith(ZIP_MAGIC) or path.endswith(".eval"):
        return INSPECT
    if _INSPECT_JSON_HEAD.match(leading):
        return INSPECT
    return MULTIVON
