"""Catalog rows -> numbers, one module per subject.

Floors within: estimates (shared rules and words) and summary, matching and deltas at
the bottom; releases; slices; cases and lottery; comparing, policy and gating; loading
(the load-and-estimate path) and calculator. Every number the CLI prints and the pages
show is computed here, once.

Must not: import Streamlit or Altair, hold SQL text (queries/*.sql, run through
dashboard/data), or format numbers for display (dashboard/render).
"""
