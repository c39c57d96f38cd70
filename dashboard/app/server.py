"""The served app: Streamlit's own (main.py), with each page's address answering with a
first page that tells the browser where the server is (first_page.py: a deep-linked
visit connects without first probing below the page's address).

`relidash serve` runs this file with `streamlit run`, which finds `app` and serves it;
AppTest and `streamlit run main.py` run the app without it, unchanged.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit import config

from dashboard.app.first_page import routes

app = st.App(
    Path(__file__).with_name("main.py"),
    routes=routes(str(config.get_option("server.baseUrlPath") or "")),
)
