"""The served app: Streamlit's own (main.py), with
- each page's address answering with a first page that tells the browser where the
  server is (first_page.py: a deep-linked visit connects without first probing below
  the page's address);
- Streamlit's frontend code served from memory, gzipped once (static_assets.py).

`relidash serve` runs this file with `streamlit run` (through launch.py), which finds
`app` and serves it; AppTest and `streamlit run main.py` run the app without it, unchanged.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware
from streamlit import config

from dashboard.app.first_page import routes
from dashboard.app.static_assets import StaticAssets

BASE = str(config.get_option("server.baseUrlPath") or "")
app = st.App(
    Path(__file__).with_name("main.py"),
    routes=routes(BASE),
    middleware=[Middleware(StaticAssets, base=BASE)],
)
