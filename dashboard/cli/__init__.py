"""The `relidash` command line: argument parsing and exit codes, one module per command
group (reports: summary and serve; ci: gate and compare; simulate), sharing common.py.

Must not: compute or format numbers (dashboard/analysis and dashboard/render do), or
import Streamlit.
"""
