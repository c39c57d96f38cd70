"""relidash: the Streamlit entry point. Navigation, the sidebar, and loading; pages compose.

Started by `relidash serve` (which sets RELIDASH_REPORTS / RELIDASH_CATALOG); pages live
in dashboard/app/page_scripts/ at fixed URL paths so shared links keep working
(not `pages/`: Streamlit treats a `pages/` folder beside the entry script as a legacy
multipage app and runs a page without the entry script).
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard.app import state as app_state
from dashboard.app import travel
from dashboard.app.auth import require_login, viewer_allowed
from dashboard.app.errors import page_boundary
from dashboard.app.pages import HOME, PAGES
from dashboard.render.formatting import md

HERE = Path(__file__).parent

st.set_page_config(page_title="relidash", page_icon="📈", layout="wide")

SCRIPTS = {
    path: st.Page(HERE / "page_scripts" / script, title=title, url_path=path)
    for script, title, path in PAGES
}
RELEASES = SCRIPTS["releases"]


def _home() -> None:
    # The default page is served at "/" whatever its url_path; send it on to /releases so
    # the Releases page has one address that links can use.
    st.switch_page(RELEASES, query_params=dict(st.query_params))


NAVIGATION = [
    st.Page(_home, title="Home", url_path=HOME, default=True, visibility="hidden"),
    *SCRIPTS.values(),
]
# The navigation is chosen before the sign-in check, so the check knows which page was
# asked for; its menu stays hidden until the viewer may see the reports.
page = st.navigation(NAVIGATION, position="sidebar" if viewer_allowed() else "hidden")
require_login(page, NAVIGATION)

with st.sidebar:
    reload = st.button("Reload reports", help="Pick up new, changed and deleted report files")
    travel.agent_errors_from_link()
    st.toggle(
        "Count agent errors as failures",
        key=travel.AGENT_ERRORS_KEY,
        help="Off (multivon-eval's rule): cases with errors are left out. On: a model error or "
        "timeout counts as a failed trial.",
    )
    travel.agent_errors_to_link()
# A page that fails shows a short message and a reference; the log gets the traceback.
with page_boundary(str(page.url_path)):
    result = app_state.load_reports(force=reload)
    with st.sidebar:
        served = app_state.catalog()
        if served.notice:  # e.g. the bucket cannot be listed: the last good catalog is shown
            st.warning(md(served.notice))
        if result is not None:
            where = app_state.reports_dir()
            st.caption(
                f"{result.files} report files in "
                f"{md(where.name + '/' if where is not None else app_state.reports_label())} · "
                f"{result.problems} problems · "
                # a catalog adopted as it was (the directory unchanged) took no load
                + (
                    f"loaded in {result.seconds:.2f} s"
                    if result.seconds
                    else "unchanged since loaded"
                )
            )
    page.run()
