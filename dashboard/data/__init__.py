"""The data layer: the DuckDB catalog of report files and the named queries over it.

No Streamlit, no Altair, no statistics here.
"""
