"""Formatting only: Altair charts, terminal tables, display formatting of numbers, gate
and compare reports (text, Markdown, JUnit), diffs as HTML, CSV export.

Must not: decide a verdict or compute an estimate (dashboard/analysis does), read the
catalog, or import Streamlit.
"""
