"""Text from a URL or a report is shown as text wherever Streamlit draws Markdown: an
alert, a caption, a heading, a widget's label, help or (select_slider, radio) options.
An image in it would be fetched by every visitor's browser, and a bold line or a link is
a banner anyone can write into a shared link; formatting.md escapes them.

Checked on the pages under AppTest, with Markdown in the query parameters and in a
report's suite, release, tag and case id; and in the source: every value formatted into
a Markdown string of dashboard/app goes through md() or is a number, so a new page's
warning is checked as well.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from dashboard.analysis.cases import case_link_key
from dashboard.render.formatting import md

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "dashboard" / "app" / "main.py"
SAMPLE = ROOT / "sample_reports"
FIXTURE = ROOT / "tests" / "fixtures" / "mv-0.18.0_early-stop_runs8.json"
TIMEOUT = 90

IMAGE = "![x](http://127.0.0.1:9/leak.png)"
BANNER = "**pwn** [sign in again](http://evil.example/login)"
LINKED = {  # every parameter a page reads
    "suite": IMAGE,
    "release": BANNER,
    "base": IMAGE,
    "k": IMAGE,
    "case": IMAGE,
    "dim": BANNER,
    "slice": IMAGE,
}
PAGES = ["releases", "slices", "lottery", "case", "gates", "review"]
# what an element draws as Markdown (a dataframe's cells, code and st.html are not)
MARKDOWN_FIELDS = {"body", "label", "help", "delta_description"}  # the last: a metric's
MARKDOWN_OPTIONS = {"select_slider", "radio"}
NOT_MARKDOWN = {"html", "code", "arrow_data_frame", "dataframe", "text", "exception"}


def _walk(node: Any) -> Iterator[Any]:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _walk(child)


def markdown_texts(at: AppTest) -> list[tuple[str, str]]:
    """(element type, text) of everything the page draws as Markdown, sidebar included."""
    found = []
    for node in _walk(at._tree):  # noqa: SLF001 (AppTest's element tree)
        proto = getattr(node, "proto", None)
        if proto is None or node.type in NOT_MARKDOWN or not hasattr(proto, "ListFields"):
            continue
        for field, value in proto.ListFields():
            if field.name in MARKDOWN_FIELDS and isinstance(value, str):
                found.append((node.type, value))
            elif field.name == "options" and node.type in MARKDOWN_OPTIONS:
                found += [(node.type, str(v)) for v in value]
    return found


def live_markup(text: str) -> bool:
    """Whether Markdown from the payloads would render: an image or link (`](` with no
    backslash between), the bold marker, or a bare URL (which GFM links whatever its
    escapes)."""
    return "](" in text or "**pwn" in text or re.search(r"https?(\\)?:", text) is not None


# relidash's own link to one of its pages (the headline's "Open its review"): its query is
# urlencoded, so a report's text in it holds no character Markdown reads
OWN_LINK = re.compile(r"\]\(/[a-z_]+\?[A-Za-z0-9%+=&._~-]*\)")


def surviving(at: AppTest) -> list[tuple[str, str]]:
    return [
        (kind, text)
        for kind, text in markdown_texts(at)
        if any(m in text for m in ("leak", "evil", "pwn")) and live_markup(OWN_LINK.sub("", text))
    ]


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Any]:
    def point(reports: Path) -> AppTest:
        monkeypatch.setenv("RELIDASH_REPORTS", str(reports))
        monkeypatch.setenv("RELIDASH_CATALOG", ":memory:")
        monkeypatch.setenv("RELIDASH_REVIEWS", str(tmp_path / "reviews"))
        monkeypatch.delenv("RELIDASH_POLICY", raising=False)
        return AppTest.from_file(str(APP), default_timeout=TIMEOUT)

    st.cache_data.clear()
    st.cache_resource.clear()
    yield point
    st.cache_data.clear()
    st.cache_resource.clear()


def visit(at: AppTest, page: str, params: dict[str, str]) -> AppTest:
    """Open `page` from a link with these query parameters, as a new visitor would."""
    at.query_params.clear()
    at.query_params.update(params)
    at.run()  # the home page sends the visitor on to /releases, with the parameters
    if page != "releases":
        at.query_params.clear()
        at.query_params.update(params)
        at.switch_page(f"page_scripts/{page}.py")
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.parametrize("page", PAGES)
def test_markdown_in_a_link_is_shown_as_text(app: Any, page: str) -> None:
    at = visit(app(SAMPLE), page, LINKED)
    warned = [w.value for w in at.warning]
    # the link's suite is named in a warning, as the characters it holds
    assert any(f"suite “{md(IMAGE)}”" in w for w in warned), warned
    assert not surviving(at), surviving(at)


def hostile_reports(directory: Path) -> tuple[Path, str]:
    """Two releases of one suite whose names, tags and one case id are Markdown; the case
    is one that passes every run (so never a lottery case)."""
    directory.mkdir()
    data = json.loads(FIXTURE.read_text())
    data["suite"] = "agent " + IMAGE
    steady = next(i for i, c in enumerate(data["cases"]) if c["pass_count"] == c["runs"])
    data["cases"][steady]["case_id"] = "case " + IMAGE
    for case in data["cases"]:
        case["tags"] = [
            f"risk_tier:{BANNER}" if t.startswith("risk_tier:") else t for t in case["tags"]
        ]
        case["tags"].append(f"{IMAGE}:v")
    for name, release in (("a.json", "r1 " + IMAGE), ("b.json", "r2 " + BANNER)):
        data["model"] = release
        (directory / name).write_text(json.dumps(data))
    return directory, case_link_key(data["cases"][steady]["case_id"], steady + 1)


@pytest.mark.parametrize("page", PAGES)
def test_markdown_in_a_report_is_shown_as_text(app: Any, tmp_path: Path, page: str) -> None:
    reports, steady_case = hostile_reports(tmp_path / "reports")
    params = {"dim": IMAGE.split(":")[0]} if page == "slices" else {}
    if page == "lottery":  # a case of the report that is not a lottery case, by its id
        params = {"case": steady_case}
    at = visit(app(reports), page, params)
    assert not surviving(at), surviving(at)
    shown = " ".join(text for _, text in markdown_texts(at))
    assert md("![x](") in shown or md(BANNER) in shown, shown[:2000]  # shown, escaped
    if page == "lottery":
        assert any(md(steady_case) in w.value for w in at.warning), [w.value for w in at.warning]


# ---- the source: a new page's Markdown is checked too ---------------------------------

APP_SOURCE = ROOT / "dashboard" / "app"
# Streamlit calls that draw their text arguments as Markdown
MARKDOWN_CALLS = {
    "markdown", "caption", "title", "header", "subheader", "success", "info", "warning",
    "error", "toast", "write", "metric", "progress", "expander", "tabs", "popover",
    "selectbox", "multiselect", "radio", "select_slider", "slider", "number_input",
    "text_input", "text_area", "toggle", "checkbox", "button", "download_button",
    "form_submit_button", "link_button", "page_link", "date_input", "time_input",
    "file_uploader", "color_picker", "pills", "segmented_control", "feedback",
}  # fmt: skip
TEXT_KEYWORDS = {"label", "body", "help", "text", "placeholder", "caption", "delta_description"}
# relidash's own helpers that hand a text argument to one of those: (position, keyword)
WRAPPERS = {"linked_select": (1, "label"), "report_page": (0, "title"), "download": (2, "label")}
NO_TEXT_FIRST = {"progress"}  # its first argument is the fraction done
# values that are numbers or one of relidash's own words, never a URL's or a report's text
SAFE_NAMES = {
    "k", "review.k", "k_max", "changed", "result.files", "result.problems", "verdict",
    "result.verdict", "status.status", "flagged.status", "decision", "review.policy.sha256",
    "done", "total",  # state.py's load progress
    "chosen.k",  # widgets.py's suite's k
    "ref",  # errors.py's reference: hex digits
    "label", "help", "title",  # the WRAPPERS' parameters, checked where they are called
}  # fmt: skip
# urlencode: a link's query, in which every character Markdown reads is %-escaped
SAFE_CALLS = {"md", "len", "int", "pct", "pct_ci", "policy_label", "max", "min", "urlencode"}


def _callee(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        if "log" in node.value.id.lower() or node.value.id in ("re", "os", "json"):
            return None
        return node.attr
    if isinstance(node, ast.Name) and node.id == "banner":  # review.py's alert of the verdict
        return "success"
    if isinstance(node, ast.Name) and node.id in WRAPPERS:
        return node.id
    if isinstance(node, ast.IfExp):
        return _callee(node.body)
    return None


def _unsafe(node: ast.expr) -> list[str]:
    """The parts of a text argument that may hold text from a URL or a report."""
    if isinstance(node, ast.Constant):
        return []
    if isinstance(node, ast.JoinedStr):
        return [
            bad
            for part in node.values
            if isinstance(part, ast.FormattedValue) and part.format_spec is None
            for bad in _unsafe(part.value)
        ]
    if isinstance(node, ast.BinOp):
        return _unsafe(node.left) + _unsafe(node.right)
    if isinstance(node, ast.IfExp):
        return _unsafe(node.body) + _unsafe(node.orelse)
    if isinstance(node, ast.BoolOp):
        return [bad for value in node.values for bad in _unsafe(value)]
    if isinstance(node, ast.List | ast.Tuple):
        return [bad for item in node.elts for bad in _unsafe(item)]
    if isinstance(node, ast.Call):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else ast.unparse(node.func)
        if name in SAFE_CALLS:
            return []
        if name == "join" and isinstance(node.func, ast.Attribute):  # "; ".join(md(x) for ...)
            (items,) = node.args
            if isinstance(items, ast.GeneratorExp | ast.ListComp):
                return _unsafe(node.func.value) + _unsafe(items.elt)
    text = ast.unparse(node)
    return [] if text in SAFE_NAMES else [text]


def markdown_arguments(tree: ast.AST) -> Iterator[tuple[int, str, ast.expr]]:
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _callee(node.func)
        if name in WRAPPERS:
            at, keyword = WRAPPERS[name]
            # the wrapped widget's help is Markdown too (k_select's reason names a release)
            wanted = (keyword, "help")
            texts = [*node.args[at : at + 1], *(k.value for k in node.keywords if k.arg in wanted)]
            yield from ((node.lineno, name, text) for text in texts)
            continue
        if name not in MARKDOWN_CALLS:
            continue
        # the first argument is the text (a widget's label); then the text keywords
        first = [] if name in NO_TEXT_FIRST else node.args[:1]
        texts = [*first, *(kw.value for kw in node.keywords if kw.arg in TEXT_KEYWORDS)]
        if name in MARKDOWN_OPTIONS:
            options = [*node.args[1:2], *(kw.value for kw in node.keywords if kw.arg == "options")]
            formats = [kw.value for kw in node.keywords if kw.arg == "format_func"]
            if not any(isinstance(f, ast.Name) and f.id == "md" for f in formats):
                texts += options  # options drawn as they are
        for text in texts:
            yield node.lineno, name, text


def test_every_value_in_app_markdown_goes_through_md() -> None:
    """A value formatted into a string Streamlit draws as Markdown is md(...) or a number
    (SAFE_NAMES, SAFE_CALLS). A page that writes `st.warning(f"... {name}")` with a
    name from a URL fails here: wrap it in md(), or, for a number or one of relidash's
    own words, add its expression to SAFE_NAMES."""
    found = []
    for path in sorted(APP_SOURCE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, name, text in markdown_arguments(tree):
            for bad in _unsafe(text):
                found.append(f"{path.relative_to(ROOT)}:{line}: st.{name}(… {bad} …)")
    assert not found, "\n".join(found)


def test_the_source_check_finds_an_unescaped_value() -> None:
    """The check above is not vacuous: it names a URL's value in a warning, a label and
    a select_slider's options, and passes the same lines written with md()."""
    source = (
        'st.warning(f"The link asks for {name} “{wanted}”")\n'
        'st.number_input(f"Min for {tag}", 0.0, 1.0)\n'
        "st.select_slider('Releases', options=names)\n"
        "(st.success if ok else st.error)(line)\n"
        'st.warning(f"The link asks for {md(wanted)} at k = {k}")\n'
        "st.select_slider('Releases', options=names, format_func=md)\n"
        'log.warning(f"{anything}")\n'
        'linked_select("dim", f"{dim} slice", dims, page="slices")\n'
    )
    bad = [
        (line, b) for line, _, text in markdown_arguments(ast.parse(source)) for b in _unsafe(text)
    ]
    assert sorted(bad) == [
        (1, "name"), (1, "wanted"), (2, "tag"), (3, "names"), (4, "line"), (8, "dim"),
    ]  # fmt: skip
    assert re.search(r"\\\]\\\(", md(IMAGE))  # the escaped form holds no `](`
