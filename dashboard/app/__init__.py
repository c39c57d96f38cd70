"""The Streamlit app: the entry script (main.py), the cache boundary (state.py), shared
widgets, sign-in (auth.py), and the pages (page_scripts/, at fixed URL paths).

Pages only compose: read widgets, call state's cached functions, pass frames to chart
factories and renderers. Must not: hold SQL or arithmetic.
"""
