"""Bringing a catalog up to date with a source, whatever harness wrote its files: what
changed since the catalog (freshness.py), each file's facts and digest (facts.py), the
batches read (ingest.py; rows.py for the harnesses read in Python), directory reports
(report_dirs.py), each harness's settings (settings.py), releases (releases.py), the
stored per-report results (results.py), the served catalog (snapshot.py), and one case's
trials read back (transcripts.py)."""
