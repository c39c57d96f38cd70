"""Widgets shared by the pages: deep-linkable pickers, tables and charts, the policy note,
CSV downloads.

Page state lives in query parameters (suite, release, k, dim, slice, case) so a copied
URL reopens the same view; a link naming something the catalog lacks gets a warning.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import pandas as pd
import streamlit as st

from dashboard.analysis.estimates import policy_label
from dashboard.analysis.suite_k import WINDOW as SUITE_K_WINDOW
from dashboard.app import travel
from dashboard.render.export import csv_bytes
from dashboard.render.formatting import html_table, md

if TYPE_CHECKING:
    import altair as alt

T = TypeVar("T")


def linked_select(
    name: str,
    label: str,
    options: Sequence[T],
    default: T | None = None,
    *,
    page: str,
    format_func: Any = str,
    help: str | None = None,
    shared: str | None = None,
    resets: Sequence[str] = (),
) -> T | None:
    """A selectbox whose value is mirrored in the `name` query parameter.

    It starts from the link's value, else the session's `shared` slot (what another page
    chose: app/travel.py), else `default`, else the first option (the last for a
    release); a stored choice that is no longer an option falls back the same way, the
    link aside. When its value is not the one the link named (the reader changed it),
    the parameters in `resets`, which belong to the old value, leave the URL and their
    pickers on this page start again.
    """
    if not options:
        return None
    as_text = [str(o) for o in options]
    wanted = st.query_params.get(name)
    key = f"{page}_{name}"

    def fallback() -> str:
        remembered = travel.shared_choice(shared) if shared else None
        if remembered is not None and remembered in as_text:
            return remembered
        if default is not None and str(default) in as_text:
            return str(default)
        return as_text[-1 if name == "release" else 0]

    if key not in st.session_state:
        if wanted is not None and wanted not in as_text:
            st.warning(
                f"The link asks for {md(name)} “{md(wanted)}”, which is not in the loaded reports; showing another."
            )
            wanted = None
        st.session_state[key] = options[as_text.index(wanted if wanted is not None else fallback())]
    elif st.session_state[key] not in options:
        st.session_state[key] = options[as_text.index(fallback())]
    value = st.selectbox(label, options, key=key, format_func=format_func, help=help)
    if wanted is not None and wanted != str(value):
        for stale in resets:
            if stale in st.query_params:
                del st.query_params[stale]
            st.session_state.pop(f"{page}_{stale}", None)
    st.query_params[name] = str(value)
    if shared:
        travel.remember_choice(shared, value)
    return value


def suite_select(suites: Sequence[str], *, page: str) -> str:
    """The suite picker every page shares: kept when the sidebar opens another page; a
    suite changed here takes its own k."""
    suite = linked_select("suite", "Suite", suites, page=page, shared="suite", resets=("k",))
    assert suite is not None  # report_page stops when no suite is loaded
    return suite


def k_options(version: int, suite: str, count_agent_errors: bool) -> list[int]:
    """1 to the largest k any release of the suite supports (at least 8 and the suite's k)."""
    from dashboard.app import state as app_state

    releases = app_state.suite_releases(version, suite)
    most = int(releases["runs_max"].max()) if releases["runs_max"].notna().any() else 1
    top = max(8, most, app_state.suite_k(version, suite, count_agent_errors).k)
    return list(range(1, top + 1))


def k_select(
    version: int,
    suite: str,
    count_agent_errors: bool,
    options: Sequence[int],
    *,
    page: str,
    label: str = "k",
    otherwise: int | None = None,
) -> int:
    """The k picker every page shares: the suite's k (analysis/suite_k.py) unless the link
    or the session names another; `otherwise` when the suite's k is not an option here."""
    from dashboard.app import state as app_state

    chosen = app_state.suite_k(version, suite, count_agent_errors)
    k = linked_select(
        "k",
        label,
        list(options),
        chosen.k if chosen.k in options else otherwise,
        page=page,
        shared=f"k@{suite}",
        help=f"The suite's k is {chosen.k}: {md(chosen.reason)}.",
    )
    assert k is not None
    return int(k)


WINDOW = SUITE_K_WINDOW  # releases shown by default: the ones the suite's k is over


def release_window(names: Sequence[str], page: str) -> tuple[str, str] | None:
    """The releases a page shows, as (first, last): the latest WINDOW by default, any
    range by the slider, deep-linkable as `from=` / `to=`. None when the suite is short
    enough to show whole."""
    if len(names) <= WINDOW:
        return None
    wanted = (st.query_params.get("from"), st.query_params.get("to"))
    key = f"{page}_window"
    start = wanted if all(w in names for w in wanted) else (names[-WINDOW], names[-1])
    if key not in st.session_state and wanted != (None, None) and start != wanted:
        st.warning("The link's release range is not in the loaded reports; showing the latest.")
    if key in st.session_state and any(v not in names for v in st.session_state[key]):
        del st.session_state[key]  # another suite's range
    # `value` (not a Session State default) makes it a range slider; the URL mirrors it
    first, last = st.select_slider(
        f"Releases shown ({len(names)} in all; the CSV holds every one)",
        options=list(names),
        value=start,
        key=key,
        format_func=md,  # its options are drawn as Markdown
    )
    st.query_params["from"], st.query_params["to"] = first, last
    return first, last


# A table of at most this many cells is drawn static (every row in view); a larger one is
# the scrolling grid. 30 releases of the Releases table are 270 cells.
STATIC_CELLS = 2000


def data_table(
    frame: pd.DataFrame, *, hide_index: bool = True, links: Mapping[str, str] | None = None
) -> None:
    """A page's table: static (an HTML table) when small, as a window of releases is, else
    the grid (st.dataframe: scrolling, sortable). `links`: the columns of URLs, each with
    the text its links show.

    Static, every row is in view and legible when projected (a long cell wraps instead of
    being cut at its column's width), and the page is drawn sooner. It is escaped HTML
    (st.html), not st.table: st.table draws every cell as Markdown, a noticeable part of
    the browser's time on a page of many rows, and the grid costs more (bench_pages,
    timed to the last element drawn).
    """
    if frame.size <= STATIC_CELLS:
        st.html(html_table(frame, links, index=not hide_index))
        return
    st.dataframe(
        frame,
        hide_index=hide_index,
        width="stretch",
        column_config={
            name: st.column_config.LinkColumn(name, display_text=text)
            for name, text in (links or {}).items()
        }
        or None,
    )


# Plot pixels of a chart that fills the column: with its axes and legend about 930, the
# main column of a 1,400-pixel window; the image scales to the column from there.
CHART_WIDTH = 800


def chart(
    drawn: dict[str, Any] | alt.TopLevelMixin, *, description: str, stretch: bool = False
) -> None:
    """A chart drawn on the server (charts.svg) and shown as an SVG image, filling the
    column when `stretch`; `description` is its alt text. A chart that cannot be drawn
    leaves a note: its numbers are in the page's tables.

    No Vega in the browser: starting Vega and drawing the Releases page's charts holds the
    browser well past the script's end (bench_pages, a returning visitor). Hovering shows
    no tooltip; every chart's numbers are in a table on its page.
    """
    from dashboard.app import state as app_state
    from dashboard.render import charts

    spec = drawn if isinstance(drawn, dict) else charts.vega_lite_spec(drawn)
    try:
        image = app_state.chart_svg(json.dumps(spec), CHART_WIDTH if stretch else None)
    except Exception as exc:  # a renderer failure costs the chart, never the page
        st.warning(
            f"The chart could not be drawn ({md(charts.failure(exc))}); its numbers are in the table."
        )
        return
    st.image(image, width="stretch" if stretch else "content", alt=description)


def policy() -> bool:
    count = bool(st.session_state.get("count_agent_errors", False))
    st.caption("Policy: " + policy_label(count))
    return count


def download(
    frame: pd.DataFrame | Callable[[], pd.DataFrame], name: str, label: str = "Download CSV"
) -> None:
    """A CSV download; a callable frame is built only when the button is clicked (the
    whole history of a long suite, say)."""
    data = (lambda: csv_bytes(frame())) if callable(frame) else csv_bytes(frame)
    st.download_button(label, data=data, file_name=f"{name}.csv", mime="text/csv", key=f"dl_{name}")


def report_page(title: str) -> tuple[int, list[str], bool]:
    """A page over the reports: its heading, then (catalog version, the suites loaded,
    whether agent errors count as failures), with the policy stated. Stops with a hint
    when nothing is loaded."""
    from dashboard.app import (
        state as app_state,  # the cache boundary; widgets stay importable alone
    )

    st.title(title)
    version = app_state.version()
    suites = app_state.suite_names(version)
    if not suites:
        no_reports()
    return version, suites, policy()


def no_reports() -> None:
    st.info(
        "No reports are loaded. Point relidash at a directory of multivon-eval report files; the Data page lists any files it could not use."
    )
    st.stop()
