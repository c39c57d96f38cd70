"""The Streamlit cache boundary: the served catalog, per-session loading, cached frames.

Pages call only these functions and the chart factories. Cached results are keyed by
simple arguments plus the catalog version, so a reload that changed nothing keeps them
and a reload that changed something invalidates them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from dashboard.analysis import (
    cases,
    comparing,  # noqa: F401  loaded with the app, not by the first page
    gating,
    lottery,
    opening,
    planning,
    releases,
    slices,
    summary,
)
from dashboard.data.load.ingest import IngestResult
from dashboard.data.load.snapshot import ServedCatalog
from dashboard.data.names import DEFAULT_MAX_BYTES
from dashboard.data.sources import SourceError
from dashboard.data.sources.reports import ReportSource, open_source
from dashboard.render.formatting import md

ENV_REPORTS = "RELIDASH_REPORTS"
ENV_ANON = "RELIDASH_ANON"
ENV_CATALOG = "RELIDASH_CATALOG"
ENV_MAX_MB = "RELIDASH_MAX_FILE_MB"


def _reports_text() -> str:
    return os.environ.get(ENV_REPORTS, "sample_reports")


@st.cache_resource(show_spinner=False)
def report_source(text: str, anon: bool) -> ReportSource:
    """The reports source (a directory, or a bucket prefix and its mirror), one per server."""
    return open_source(text, anon=anon)


def source() -> ReportSource:
    """The source `relidash serve SRC` names; a URL that cannot be used stops the page."""
    try:
        return report_source(_reports_text(), bool(os.environ.get(ENV_ANON)))
    except SourceError as exc:
        st.error(md(str(exc)))
        st.stop()
        raise  # not reached: st.stop raises


def reports_dir() -> Path | None:
    """The reports directory, or None when the reports are in object storage."""
    return source().local_root


def reports_label() -> str:
    """Where the reports are, as the server was given it: a directory or a URL."""
    return source().label


# A server serves the one source its environment names; a catalog for another (a changed
# environment, a test's) is let go, and so is every one when the cache is cleared: its
# watch is closed then, or each would keep an inotify instance and threads for good.
@st.cache_resource(show_spinner=False, max_entries=1, on_release=ServedCatalog.release)
def served_catalog(text: str, anon: bool, options: opening.LoadOptions) -> ServedCatalog:
    return opening.served_catalog(report_source(text, anon), options)


def load_options() -> opening.LoadOptions:
    """The load options `relidash serve` passed in its environment (the CLI's own)."""
    max_mb = os.environ.get(ENV_MAX_MB)
    return opening.LoadOptions(
        catalog=os.environ.get(ENV_CATALOG) or None,
        max_bytes=int(float(max_mb) * 1024 * 1024) if max_mb else DEFAULT_MAX_BYTES,
    )


def catalog() -> ServedCatalog:
    source()  # a URL that cannot be used stops here, with its message
    return served_catalog(_reports_text(), bool(os.environ.get(ENV_ANON)), load_options())


def load_reports(force: bool = False) -> IngestResult | None:
    """Refresh the catalog once per session (and on demand), with a progress bar."""
    served = catalog()
    if not force and served.version >= 0:
        if st.session_state.get("relidash_loaded_version") is not None:
            return served.last_result
        if not served.stale():  # a new session on an unchanged directory renders at once
            st.session_state["relidash_loaded_version"] = served.version
            return served.last_result
    reports = source()
    if reports.local_root is not None and not reports.local_root.is_dir():
        st.error(f"The reports directory {md(str(reports.local_root))} does not exist.")
        st.stop()
    bar = st.progress(0.0, text="Loading reports…")

    def progress(done: int, total: int) -> None:
        bar.progress(
            done / total if total else 1.0, text=f"Loading reports: {done} of {total} files parsed"
        )

    try:
        result = opening.refresh_served(served, load_options(), progress)
    except SourceError as exc:  # no catalog at all to fall back on
        bar.empty()
        st.error(f"The reports cannot be loaded: {md(str(exc))}")
        st.stop()
    bar.empty()
    st.session_state["relidash_loaded_version"] = served.version
    return result


def version() -> int:
    return catalog().version


@st.cache_data(show_spinner=False, max_entries=64)
def overview(version: int) -> pd.DataFrame:
    return summary.report_overview(catalog().cursor())


# What a page of one suite starts from: the suite names and that suite's reports, read on
# their own. The overview of every report (the Data page's) is a row per report, slow
# to fetch after each load in a long history, and copied at each cache hit.
@st.cache_data(show_spinner=False, max_entries=64)
def suite_names(version: int) -> list[str]:
    return sorted(summary.loaded_suites(catalog().cursor()))


@st.cache_data(show_spinner=False, max_entries=256)
def suite_overview(version: int, suite: str) -> pd.DataFrame:
    """The suite's rows of the overview: every analysis of one suite reads only those."""
    return summary.report_overview(catalog().cursor(), [suite])


@st.cache_data(show_spinner=False, max_entries=256)
def suite_releases(version: int, suite: str) -> pd.DataFrame:
    return releases.suite_releases(suite_overview(version, suite), suite)


@st.cache_data(show_spinner=False, max_entries=64)
def problems(version: int) -> pd.DataFrame:
    return summary.load_problems(catalog().cursor())


@st.cache_data(show_spinner=False, max_entries=128)
def release_table(
    version: int,
    suite: str,
    k: int,
    count_agent_errors: bool,
    window: tuple[str, str] | None = None,
) -> pd.DataFrame:
    return releases.release_table(
        catalog().cursor(), suite_overview(version, suite), suite, k, count_agent_errors, window
    )


@st.cache_data(show_spinner=False, max_entries=128)
def passk_curve(version: int, report_id: int, k_max: int, count_agent_errors: bool) -> pd.DataFrame:
    return releases.passk_curve(catalog().cursor(), report_id, k_max, count_agent_errors)


def _suite_cases(
    suite: str, count_agent_errors: bool, report_ids: list[int] | None
) -> pd.DataFrame:
    from dashboard.data.catalog.queries import run_query

    return run_query(
        catalog().cursor(),
        "read/suite_cases",
        suite=suite,
        count_agent_errors=count_agent_errors,
        report_ids=report_ids,
    )


# The tags of a suite's cases, cached apart from the cases: a page that needs only the
# tags does not unpickle every case of every release at each visit (in a long history,
# most of a Slices visit's server time). Read from case_tags with DISTINCT, not from the
# cases, which is an order of magnitude slower the first time after a load.
@st.cache_data(show_spinner=False, max_entries=256)
def suite_tags(version: int, suite: str) -> list[str]:
    from dashboard.data.catalog.queries import run_query

    return sorted(
        str(t) for t in run_query(catalog().cursor(), "read/suite_tags", suite=suite)["tag"]
    )


@st.cache_data(show_spinner=False, max_entries=128)
def report_cases(
    version: int, suite: str, report_id: int, count_agent_errors: bool
) -> pd.DataFrame:
    """The cases of one report of the suite, as suite_cases lists them."""
    return _suite_cases(suite, count_agent_errors, [report_id])


# Charts of the cached frames, cached as Vega-Lite specs: building a chart is a large
# part of a warm page's server time (Altair checks each part as it is made); a hit only
# unpickles the spec. Altair is imported on a miss (a slow import, once per server): a
# page without charts never needs it. widgets.chart draws a spec as SVG (chart_svg,
# cached too).
@st.cache_data(show_spinner=False, max_entries=128)
def releases_chart(
    version: int,
    suite: str,
    k: int,
    count_agent_errors: bool,
    window: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """The Releases chart's Vega-Lite spec (widgets.chart draws it)."""
    from dashboard.render import charts

    table = release_table(version, suite, k, count_agent_errors, window)
    return charts.vega_lite_spec(charts.releases_chart(table, k))


@st.cache_data(show_spinner=False, max_entries=128)
def curve_chart(
    version: int, report_id: int, k_max: int, count_agent_errors: bool
) -> dict[str, Any]:
    from dashboard.render import charts

    curve = passk_curve(version, report_id, k_max, count_agent_errors)
    return charts.vega_lite_spec(charts.curve_chart(curve))


@st.cache_data(show_spinner=False, max_entries=128)
def slice_chart(
    version: int,
    suite: str,
    dim: str,
    k: int,
    count_agent_errors: bool,
    window: tuple[str, str] | None = None,
) -> dict[str, Any]:
    from dashboard.render import charts

    metrics = slice_metrics(version, suite, dim, k, count_agent_errors, window)
    order = list(suite_releases(version, suite)["release"])
    return charts.vega_lite_spec(charts.slice_chart(metrics, order, k))


@st.cache_data(show_spinner=False, max_entries=256)
def chart_svg(spec_json: str, width: int | None) -> str:
    """A chart's Vega-Lite spec (as JSON, the cache's key) drawn as SVG on the server."""
    from dashboard.render import charts

    return charts.svg(json.loads(spec_json), width)


@st.cache_data(show_spinner=False, max_entries=128)
def slice_metrics(
    version: int,
    suite: str,
    dim: str,
    k: int,
    count_agent_errors: bool,
    window: tuple[str, str] | None = None,
) -> pd.DataFrame:
    return slices.slice_metrics(
        catalog().cursor(),
        suite_overview(version, suite),
        suite,
        dim,
        k,
        count_agent_errors,
        window,
    )


@st.cache_data(show_spinner=False, max_entries=128)
def case_history(
    version: int,
    suite: str,
    tag: str | None,
    count_agent_errors: bool,
    window: tuple[str, str] | None = None,
) -> pd.DataFrame:
    return cases.case_history(
        catalog().cursor(), suite_overview(version, suite), suite, tag, count_agent_errors, window
    )


@st.cache_data(show_spinner=False, max_entries=128)
def lottery_table(
    version: int,
    suite: str,
    report_id: int,
    k: int,
    count_agent_errors: bool,
    order: str = "reliable",
) -> pd.DataFrame:
    return lottery.lottery_table(
        catalog().cursor(),
        suite_overview(version, suite),
        suite,
        report_id,
        k,
        count_agent_errors,
        order,
    )


@st.cache_data(show_spinner=False, max_entries=256)
def case_detail(version: int, report_id: int, case_idx: int) -> dict[str, Any] | None:
    return cases.case_detail(catalog().cursor(), report_id, case_idx)


@st.cache_data(show_spinner=False, max_entries=256)
def case_trials(version: int, report_id: int, case_idx: int) -> pd.DataFrame:
    return cases.case_trials(catalog().cursor(), report_id, case_idx, source())


@st.cache_data(show_spinner=False, max_entries=256)
def case_text(version: int, report_id: int, case_idx: int) -> dict[str, Any]:
    return cases.case_text(catalog().cursor(), report_id, case_idx, source())


@st.cache_data(show_spinner=False, max_entries=128)
def gate_table(
    version: int,
    suite: str,
    k: int,
    rules: tuple[tuple[str | None, float], ...],
    count_agent_errors: bool,
    window: tuple[str, str] | None = None,
) -> pd.DataFrame:
    return gating.gate_table(
        catalog().cursor(),
        suite_overview(version, suite),
        suite,
        k,
        rules,
        count_agent_errors,
        window,
    )


@st.cache_data(show_spinner=False, max_entries=64)
def holding_table(
    version: int,
    suite: str,
    k: int,
    rules: tuple[tuple[str | None, float], ...],
    count_agent_errors: bool,
) -> pd.DataFrame:
    return gating.holding_table(
        catalog().cursor(), suite_overview(version, suite), suite, k, rules, count_agent_errors
    )


@st.cache_data(show_spinner="Simulating designs…", max_entries=32)
def trial_plan(
    version: int,
    suite: str,
    release: str,
    k: int,
    half_width: float | None,
    detect_drop: float | None,
    count_agent_errors: bool,
) -> planning.TrialPlan:
    return planning.plan_trials(
        catalog().cursor(),
        suite,
        release,
        k,
        half_width=half_width,
        detect_drop=detect_drop,
        count_agent_errors=count_agent_errors,
    )


# ---- release review ------------------------------------------------------------------------

ENV_POLICY = "RELIDASH_POLICY"
ENV_REVIEWS = "RELIDASH_REVIEWS"


def policy_file() -> Path | None:
    """`relidash serve --policy FILE`, if given."""
    value = os.environ.get(ENV_POLICY)
    return Path(value) if value else None


def reviews_dir() -> Path:
    """`relidash serve --reviews RDIR`, else $XDG_DATA_HOME/relidash/reviews."""
    from dashboard.data.records.signoffs import default_reviews_dir

    value = os.environ.get(ENV_REVIEWS)
    return Path(value) if value else default_reviews_dir()


@st.cache_data(show_spinner=False, max_entries=64)
def build_review(
    version: int,
    suite: str,
    release: str,
    base: str | None,
    k: int | None,
    count_agent_errors: bool,
) -> Any:
    """The release review (analysis.review.Review); raises what build_review raises."""
    from dashboard.analysis.review import build_review as build

    return build(
        catalog().cursor(),
        suite,
        release,
        base,
        k,
        policy_file=policy_file(),
        reports_dir=source(),
        count_agent_errors=count_agent_errors,
    )


@st.cache_data(show_spinner=False, max_entries=64)
def review_base(version: int, suite: str, release: str, k: int, count_agent_errors: bool) -> Any:
    """The Review page's default base (analysis.review_base.BaseChoice)."""
    from dashboard.analysis.review_base import default_base

    releases = suite_releases(version, suite)
    return default_base(catalog().cursor(), releases, release, k, count_agent_errors)


def review_history(
    allowed_signers: Path | None = None, **filters: str | None
) -> tuple[list[Any], list[Any]]:
    """Sign-offs with their evidence status now: read fresh each run (records are small and
    another replica or the CLI may have added one); `filters`: suite, release, decision;
    signatures checked against `allowed_signers` (app.ledger_view.allowed_signers)."""
    from dashboard.analysis.review_history import review_history as history
    from dashboard.data.records.signoffs import ReviewsDirError

    try:
        return history(reviews_dir(), source(), allowed_signers=allowed_signers, **filters)
    except (ReviewsDirError, SourceError) as exc:
        st.warning(f"Sign-offs cannot be listed: {md(exc)}")
        return [], []


def approved_but_changed() -> dict[tuple[str, str], Any]:
    """Approved releases whose evidence changed, for the Releases and Review pages' flag.

    Hashing the evidence files is cached per catalog version and set of records: the
    report files change only when a load says so (and bumps the version), records only
    by a new file name, so a page view does not read every signed report again.
    """
    directory = reviews_dir()
    try:
        names = tuple(sorted(p.name for p in directory.glob("*.json")))
    except OSError:
        names = ()
    return _approved_but_changed(version(), str(directory), names)


@st.cache_data(show_spinner=False, max_entries=16)
def _approved_but_changed(
    version: int, directory: str, names: tuple[str, ...]
) -> dict[tuple[str, str], Any]:
    from dashboard.analysis.review_history import approved_but_changed as flagged
    from dashboard.data.records.signoffs import ReviewsDirError

    try:
        return flagged(Path(directory), source())
    except (ReviewsDirError, SourceError):
        return {}  # the pages that list sign-offs say why


@st.cache_data(show_spinner=False, max_entries=64)
def case_choices(version: int, suite: str, count_agent_errors: bool) -> dict[str, str]:
    from dashboard.analysis.case_story import case_choices as choices
    from dashboard.analysis.case_story import suite_case_keys

    return choices(
        suite_case_keys(
            catalog().cursor(), suite_overview(version, suite), suite, count_agent_errors
        )
    )


@st.cache_data(show_spinner=False, max_entries=128)
def case_story(
    version: int, suite: str, case: str, k: int, count_agent_errors: bool
) -> pd.DataFrame | None:
    from dashboard.analysis.case_story import case_story as story

    return story(
        catalog().cursor(), suite_overview(version, suite), suite, case, k, count_agent_errors
    )


@st.cache_data(show_spinner=False, max_entries=128)
def case_link(version: int, suite: str, wanted: str, count_agent_errors: bool) -> str | None:
    """The link key of the case a link names by id, input or digest, or None."""
    from dashboard.analysis.case_story import find_story_key, story_link_key, suite_case_keys

    cases = suite_case_keys(
        catalog().cursor(), suite_overview(version, suite), suite, count_agent_errors
    )
    key = find_story_key(cases["key"], cases, wanted)
    return None if key is None else story_link_key(key)


# ---- the suite's k and the first page's headline --------------------------------------------


@st.cache_data(show_spinner=False, max_entries=64)
def suite_policy(version: int, suite: str) -> tuple[Any, str]:
    """(the suite's policy as the Review page resolves it, "") or (None, why not)."""
    from dashboard.analysis.headline import suite_policy as resolve

    return resolve(suite, policy_file(), source())


@st.cache_data(show_spinner=False, max_entries=256)
def suite_k(version: int, suite: str, count_agent_errors: bool) -> Any:
    """The suite's k (analysis.suite_k.SuiteK): every page's k until a link or the
    reader picks another."""
    from dashboard.analysis.suite_k import suite_k as choose

    policy, _ = suite_policy(version, suite)
    return choose(
        catalog().cursor(), suite_overview(version, suite), suite, count_agent_errors, policy
    )


@st.cache_data(show_spinner=False, max_entries=128)
def headline(version: int, suite: str, k: int, count_agent_errors: bool) -> Any:
    """The headline of the suite's latest release at k (analysis.headline.Headline)."""
    from dashboard.analysis.headline import latest_headline

    policy, error = suite_policy(version, suite)
    return latest_headline(
        catalog().cursor(),
        suite_overview(version, suite),
        suite,
        k,
        policy,
        policy_error=error,
        count_agent_errors=count_agent_errors,
    )
