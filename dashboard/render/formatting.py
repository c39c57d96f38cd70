"""How numbers and report text look wherever relidash shows them: percentages with one
decimal and the CI in brackets, UNKNOWN spelled out, text flattened to one line, and
the Releases table as the page shows it.

Formatting only. Must not: decide a verdict or a reading (analysis does), import
Streamlit, or do I/O.
"""

from __future__ import annotations

import html
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

import pandas as pd

from dashboard.analysis.estimates import is_missing
from dashboard.render.visible import visible

INPUT_WIDTH = 70
_DIGEST_ID = re.compile(r"sha256:[0-9a-f]{64}")
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$:])")
# GFM makes a bare URL or `www.` name a link whatever its escapes (it looks for them in
# the text the escapes leave): a word joiner (U+2060: invisible, no break) after the
# scheme or the `www` keeps it text. A bare e-mail address still becomes a mailto: link,
# which opens no page; a signed-in viewer's address reads as it is.
_AUTOLINK = re.compile(r"(?i)(?:https?|ftp|mailto|xmpp)(?=:)|www(?=\.)")
WORD_JOINER = "\u2060"


def md(text: Any) -> str:
    """Report text made inert in Streamlit Markdown (captions, alerts, headings): every
    punctuation mark that could start syntax (`**`, links, `:red[...]`, `$...$`) escaped,
    and a bare URL kept from becoming a link."""
    flat = _AUTOLINK.sub(lambda m: m.group(0) + WORD_JOINER, " ".join(str(text).split()))
    return _MARKDOWN_SPECIAL.sub(r"\\\1", flat)


# The static tables' look (widgets.data_table): close to Streamlit's own st.table,
# wrapping long cells rather than cutting them; text in the theme's own color (muted by
# opacity, not a fixed gray), so a viewer's dark theme reads as well.
TABLE_STYLE = (
    "<style>"
    ".relidash-table-wrap{overflow-x:auto;margin-bottom:1rem}"
    ".relidash-table{border-collapse:collapse;width:100%;font-size:0.875rem;line-height:1.4}"
    ".relidash-table th,.relidash-table td{border:1px solid rgba(128,128,128,0.25);"
    "padding:0.25rem 0.375rem;text-align:left;vertical-align:top}"
    ".relidash-table thead th{opacity:0.7;font-weight:400}"
    ".relidash-table tbody th{font-weight:400}"
    ".relidash-table td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "</style>"
)
_SAFE_URL = re.compile(r"(/|https?://)[^\s]*\Z")


def html_table(
    frame: pd.DataFrame, links: Mapping[str, str] | None = None, *, index: bool = False
) -> str:
    """frame as a static HTML table (st.html draws it): every text escaped, so report text
    is never markup; a missing cell blank; numbers right-aligned; the URLs of a `links`
    column (name -> the text shown) as links, and any other URL there as plain text.
    `index`: the row labels as a first column, headed by the index's name."""
    links = links or {}
    numeric = {
        name: pd.api.types.is_numeric_dtype(frame[name])
        and not pd.api.types.is_bool_dtype(frame[name])
        for name in frame.columns
    }
    corner = f"<th>{_h(frame.index.name)}</th>" if index else ""
    head = corner + "".join(f'<th scope="col">{_h(name)}</th>' for name in frame.columns)
    rows = []
    for label, values in zip(frame.index, frame.itertuples(index=False, name=None), strict=True):
        cells = [f'<th scope="row">{_h(label)}</th>'] if index else []
        for name, value in zip(frame.columns, values, strict=True):
            if name in links and not is_missing(value) and _SAFE_URL.match(str(value)):
                cells.append(f'<td><a href="{_h(value)}">{_h(links[name])}</a></td>')
            elif numeric[name]:
                cells.append(f'<td class="num">{_h(value)}</td>')
            else:
                cells.append(f"<td>{_h(value)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return (
        f'{TABLE_STYLE}<div class="relidash-table-wrap"><table class="relidash-table">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def _h(value: Any) -> str:
    """One cell's text on one line, escaped for HTML; a missing value is blank, a float
    has 4 decimals (the CSV keeps every digit)."""
    if is_missing(value):
        return ""
    if isinstance(value, float):
        return f"{value:.4f}"
    return html.escape(" ".join(str(value).split()))


def short_case_id(case_id: Any) -> str:
    """A digest id (`sha256:` and 64 hex digits) cut to its first 12 digits; the full id
    stays in links and CSV downloads."""
    text = "" if case_id is None else str(case_id)
    if _DIGEST_ID.fullmatch(text):
        return text[: len("sha256:") + 12] + "…"
    return text


def case_url(suite: str, link_key: str) -> str:
    """The Case page's address for one case of a suite."""
    return "/case?" + urlencode({"suite": suite, "case": link_key})


def with_case_links(frame: pd.DataFrame, suite: str) -> pd.DataFrame:
    """A table with a `link_key` column as the pages show it: digest ids shortened, and a
    `case` link to the Case page in place of the key (the CSV keeps the full frame)."""
    shown = frame.copy()
    if "case_id" in shown.columns:
        shown["case_id"] = [short_case_id(c) if isinstance(c, str) else c for c in shown["case_id"]]
    shown["case"] = [case_url(suite, str(k)) for k in shown["link_key"]]
    return shown.drop(columns=["link_key"])


def points(x: float | None, minus: str = "-") -> str:
    """A change in percentage points with its sign: `+3.3`, `-6.7` (— when UNKNOWN)."""
    return "—" if x is None else f"{100 * x:+.1f}".replace("-", minus)


def delta_text(
    delta: float | None,
    low: float | None,
    high: float | None,
    pairs: int,
    unknown: str = "",
    minus: str = "-",
) -> str:
    """A paired change in points with its CI, as every surface shows it:
    `+3.3 pts [-6.7, +13.3] over 30 cases` (`unknown`, else UNKNOWN, without one)."""
    if delta is None or low is None or high is None:
        return unknown or "UNKNOWN"
    return (
        f"{points(delta, minus)} pts [{points(low, minus)}, {points(high, minus)}] "
        f"over {pairs} cases"
    )


def pct(value: Any) -> str:
    return "UNKNOWN" if value is None or pd.isna(value) else f"{100 * float(value):.1f}%"


def pct_ci(value: Any, low: Any, high: Any) -> str:
    """`66.7% [50.0–83.3]`; the value alone when it has no interval (a per-case rule's
    weakest case), UNKNOWN without a value."""
    if value is None or pd.isna(value):
        return "UNKNOWN"
    if low is None or high is None or pd.isna(low) or pd.isna(high):
        return pct(value)
    return f"{pct(value)} [{100 * float(low):.1f}–{100 * float(high):.1f}]"


def with_ci(cell: dict[str, Any] | None) -> str:
    """pct_ci of a summary document's metric cell ({value, ci_low, ci_high, ...})."""
    if not cell or cell.get("value") is None:
        return "UNKNOWN"
    return pct_ci(cell["value"], cell["ci_low"], cell["ci_high"])


def envelope_text(width_points: Any, reading: str) -> str:
    """The envelope as every surface shows it: `37.5 pts (in between)`."""
    if width_points is None or pd.isna(width_points):
        return "UNKNOWN"
    return f"{float(width_points):.1f} pts ({reading})"


def one_line(text: str | None, width: int = INPUT_WIDTH) -> str:
    flat = visible(" ".join((text or "").split()))
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def display_release_table(table: pd.DataFrame) -> pd.DataFrame:
    """The release table as the page shows it: text cells, UNKNOWN spelled out."""
    k = int(table["k"].iloc[0]) if not table.empty else 0
    rows = []
    for r in table.itertuples(index=False):
        change = "—"
        if r.pass_hat_k_change is not None and pd.notna(r.pass_hat_k_change):
            change = delta_text(
                r.pass_hat_k_change,
                r.pass_hat_k_change_ci_low,
                r.pass_hat_k_change_ci_high,
                r.pass_hat_k_change_pairs,
            ) + (" ◆" if r.pass_hat_k_change_significant else "")
        runs = (
            "—"
            if r.runs_max is None
            else (str(r.runs_max) if r.runs_min == r.runs_max else f"{r.runs_min}–{r.runs_max}")
        )
        rows.append(
            {
                "release": r.release,
                "pass@1": pct_ci(r.pass_at_1, r.pass_at_1_ci_low, r.pass_at_1_ci_high),
                f"pass@{k}": pct_ci(r.pass_at_k, r.pass_at_k_ci_low, r.pass_at_k_ci_high),
                f"pass^{k}": pct_ci(r.pass_hat_k, r.pass_hat_k_ci_low, r.pass_hat_k_ci_high),
                # the change next to the numbers it is about: visible in a 1,400-pixel window
                f"Δ pass^{k}": change,
                "envelope": envelope_text(r.envelope_points, r.envelope_reading),
                "cases (evaluated / errored / skipped)": f"{r.cases_evaluated} / {r.cases_errored} / {r.cases_skipped}",
                "runs": runs,
                "format": r.format + (" (upgraded)" if r.upgraded else ""),
            }
        )
    return pd.DataFrame(rows)


def unknown_notes(table: pd.DataFrame, shown: int = 8) -> list[str]:
    """One line per distinct UNKNOWN reason, with the releases it covers (the first
    `shown` of them named, the rest counted), in order of first appearance."""
    releases_of: dict[str, list[str]] = {}
    for r in table.itertuples(index=False):
        for reason in (r.pass_at_1_unknown, r.pass_at_k_unknown, r.pass_hat_k_unknown):
            if reason:
                releases_of.setdefault(str(reason), []).append(str(r.release))
                break
    notes = []
    for reason, releases in releases_of.items():
        names = ", ".join(releases[:shown])
        more = f" and {len(releases) - shown} more" if len(releases) > shown else ""
        plural = "s" if len(releases) > 1 else ""
        notes.append(f"{reason} (release{plural} {names}{more})")
    return notes


def slice_rows(metrics: pd.DataFrame, k: int) -> pd.DataFrame:
    """The Slices page's table of analysis.slices.slice_metrics: pass^k with its CI as text."""
    shown = metrics.assign(
        **{
            f"pass^{k}": [
                pct_ci(v, lo, hi)
                for v, lo, hi in zip(
                    metrics["pass_hat_k"], metrics["ci_low"], metrics["ci_high"], strict=True
                )
            ]
        }
    )
    columns = ["slice", "release", "cases_total", "cases_evaluated", f"pass^{k}", "interval"]
    return shown[[*columns, "unknown_reason"]]
