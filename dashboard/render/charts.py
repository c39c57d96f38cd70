"""Altair chart factories: DataFrame in, chart out; and a chart's spec drawn as SVG (svg).
No I/O, no statistics.

Intervals arrive computed (stats layer) and are drawn as y/y2 bands under lines; Vega's
own `extent="ci"` is never used because it re-samples rows at random on every render.
"""

from __future__ import annotations

from typing import Any

import altair as alt
import pandas as pd

from dashboard.render.formatting import one_line

METRIC_COLORS = alt.Scale(domain=["pass@k", "pass^k"], range=["#1f6feb", "#d1242f"])
PERCENT = alt.Axis(format="%")


def releases_chart(table: pd.DataFrame, k: int) -> alt.Chart:
    """pass@k and pass^k across releases, each with its shaded 95% CI band."""
    long = pd.concat(
        [
            pd.DataFrame(
                {
                    "release": table["release"],
                    "release_rank": table["release_rank"],
                    "metric": name,
                    "value": table[col].astype(float),
                    "ci_low": table[f"{col}_ci_low"].astype(float),
                    "ci_high": table[f"{col}_ci_high"].astype(float),
                    "n_cases": table["cases_evaluated"],
                    "k": k,
                    "interval": table[f"{col}_method"].map(_interval_name),
                }
            )
            for name, col in (("pass@k", "pass_at_k"), ("pass^k", "pass_hat_k"))
        ]
    )
    order = list(table.sort_values("release_rank")["release"])
    x = alt.X("release:N", sort=order, title="release")
    tooltip = [
        alt.Tooltip("release:N"),
        alt.Tooltip("metric:N"),
        alt.Tooltip("k:Q"),
        alt.Tooltip("value:Q", format=".1%"),
        alt.Tooltip("ci_low:Q", format=".1%", title="CI low"),
        alt.Tooltip("ci_high:Q", format=".1%", title="CI high"),
        alt.Tooltip("n_cases:Q", title="n (cases)"),
        alt.Tooltip("interval:N", title="interval"),
    ]
    base = alt.Chart(inline(long)).encode(x=x, color=alt.Color("metric:N", scale=METRIC_COLORS))
    band = base.mark_area(opacity=0.18).encode(
        y=alt.Y("ci_low:Q", axis=PERCENT, scale=alt.Scale(domain=[0, 1]), title=f"k = {k}"),
        y2="ci_high:Q",
        tooltip=tooltip,
    )
    line = base.mark_line(point=True).encode(y="value:Q", tooltip=tooltip)
    # each release's own interval as an error bar: a release between two UNKNOWNs has no
    # band to sit in, and every estimate must show its CI
    bars = base.mark_rule(strokeWidth=2, opacity=0.7).encode(
        y="ci_low:Q", y2="ci_high:Q", tooltip=tooltip
    )
    return (band + bars + line).properties(height=320)


def curve_chart(curve: pd.DataFrame) -> alt.Chart:
    """pass@k and pass^k against k for one release, with CI bands: the reliability envelope."""
    known = curve[curve["value"].notna()]
    tooltip = [
        alt.Tooltip("metric:N"),
        alt.Tooltip("k:Q"),
        alt.Tooltip("value:Q", format=".1%"),
        alt.Tooltip("ci_low:Q", format=".1%", title="CI low"),
        alt.Tooltip("ci_high:Q", format=".1%", title="CI high"),
        alt.Tooltip("n_cases:Q", title="n (cases)"),
        alt.Tooltip("interval:N"),
    ]
    base = alt.Chart(inline(known)).encode(
        x=alt.X("k:Q", axis=alt.Axis(tickMinStep=1)),
        color=alt.Color("metric:N", scale=METRIC_COLORS),
    )
    band = base.mark_area(opacity=0.18).encode(
        y=alt.Y("ci_low:Q", axis=PERCENT, scale=alt.Scale(domain=[0, 1]), title="estimate"),
        y2="ci_high:Q",
        tooltip=tooltip,
    )
    return (band + base.mark_line(point=True).encode(y="value:Q", tooltip=tooltip)).properties(
        height=280
    )


def slice_chart(frame: pd.DataFrame, order: list[str], k: int) -> alt.Chart:
    """pass^k with CI band per slice across releases, faceted as small multiples."""
    data = _as_floats(frame, "pass_hat_k", "ci_low", "ci_high")
    tooltip = [
        alt.Tooltip("slice:N"),
        alt.Tooltip("release:N"),
        alt.Tooltip("k:Q"),
        alt.Tooltip("pass_hat_k:Q", format=".1%", title="pass^k"),
        alt.Tooltip("ci_low:Q", format=".1%"),
        alt.Tooltip("ci_high:Q", format=".1%"),
        alt.Tooltip("cases_evaluated:Q", title="n (cases)"),
        alt.Tooltip("interval:N"),
    ]
    x = alt.X("release:N", sort=order, title=None)
    base = alt.Chart().encode(x=x)
    band = base.mark_area(opacity=0.2, color="#d1242f").encode(
        y=alt.Y("ci_low:Q", axis=PERCENT, scale=alt.Scale(domain=[0, 1]), title=f"pass^{k}"),
        y2="ci_high:Q",
        tooltip=tooltip,
    )
    line = base.mark_line(point=True, color="#d1242f").encode(y="pass_hat_k:Q", tooltip=tooltip)
    return (
        alt.layer(band, line, data=inline(data))
        .properties(width=220, height=160)
        .facet(facet=alt.Facet("slice:N", title=None), columns=3)
    )


def gate_chart(table: pd.DataFrame, order: list[str], k: int) -> alt.Chart:
    """pass^k CI per release and slice with each rule's threshold drawn as a rule line."""
    data = _as_floats(table, "pass_hat_k", "ci_low", "ci_high")
    tooltip = [
        alt.Tooltip("release:N"),
        alt.Tooltip("slice:N"),
        alt.Tooltip("verdict:N"),
        alt.Tooltip("pass_hat_k:Q", format=".1%", title=f"pass^{k}"),
        alt.Tooltip("ci_low:Q", format=".1%"),
        alt.Tooltip("ci_high:Q", format=".1%"),
        alt.Tooltip("threshold:Q", format=".1%"),
        alt.Tooltip("n_cases:Q", title="n (cases)"),
        alt.Tooltip("k:Q"),
        alt.Tooltip("interval:N"),
    ]
    x = alt.X("release:N", sort=order, title=None)
    color = alt.Color(
        "verdict:N",
        scale=alt.Scale(
            # every verdict analysis/gating.py gives (VERDICTS), each its own colour
            domain=["PASSED", "FAILED", "UNDECIDED", "UNKNOWN"],
            range=["#1a7f37", "#d1242f", "#6e40c9", "#9a6700"],
        ),
    )
    bars = (
        alt.Chart()
        .mark_rule(strokeWidth=3)
        .encode(
            x=x,
            y=alt.Y("ci_low:Q", axis=PERCENT, scale=alt.Scale(domain=[0, 1]), title=f"pass^{k} CI"),
            y2="ci_high:Q",
            color=color,
            tooltip=tooltip,
        )
    )
    points = (
        alt.Chart()
        .mark_point(filled=True, size=60)
        .encode(x=x, y="pass_hat_k:Q", color=color, tooltip=tooltip)
    )
    threshold = alt.Chart().mark_rule(strokeDash=[6, 4], color="#57606a").encode(y="threshold:Q")
    return (
        alt.layer(bars, points, threshold, data=data)
        .properties(width=300, height=200)
        .facet(facet=alt.Facet("slice:N", title=None), columns=2)
    )


def calculator_chart(curves: pd.DataFrame) -> alt.Chart:
    """pass@k and pass^k against k with the band between them shaded."""
    long = curves.melt(id_vars=["k"], value_vars=["pass_at_k", "pass_hat_k"], var_name="metric")
    long["metric"] = long["metric"].map({"pass_at_k": "pass@k", "pass_hat_k": "pass^k"})
    band = (
        alt.Chart(curves)
        .mark_area(opacity=0.15, color="#8250df")
        .encode(
            x=alt.X("k:Q", axis=alt.Axis(tickMinStep=1)),
            y=alt.Y(
                "pass_hat_k:Q", axis=PERCENT, scale=alt.Scale(domain=[0, 1]), title="probability"
            ),
            y2="pass_at_k:Q",
            tooltip=[
                alt.Tooltip("k:Q"),
                alt.Tooltip("envelope_points:Q", format=".1f", title="envelope (points)"),
            ],
        )
    )
    lines = (
        alt.Chart(long)
        .mark_line(point=True)
        .encode(
            x="k:Q",
            y="value:Q",
            color=alt.Color("metric:N", scale=METRIC_COLORS),
            tooltip=[
                alt.Tooltip("metric:N"),
                alt.Tooltip("k:Q"),
                alt.Tooltip("value:Q", format=".1%"),
            ],
        )
    )
    return (band + lines).properties(height=300)


def inline(frame: pd.DataFrame) -> alt.InlineData:
    """A frame's rows as a chart's own data. A chart given a DataFrame is converted by
    Altair's global data transformer, which Streamlit swaps while it draws a chart on
    another thread; inline rows make vega_lite_spec the same on every thread."""
    values = frame.astype(object).where(frame.notna(), None).to_dict(orient="records")
    return alt.InlineData(values=values)


def vega_lite_spec(chart: alt.TopLevelMixin) -> dict[str, Any]:
    """The Vega-Lite spec the chart is drawn from (its data inline; svg draws it).

    The pages cache specs, not charts: converting a chart validates it against the
    Vega-Lite schema, a large part of the Releases page's run.
    """
    spec: dict[str, Any] = chart.to_dict()
    return spec


# How the server draws a chart (svg): labels legible when projected, in the browser's own
# sans-serif (an SVG shown as an image cannot load the page's web fonts).
SVG_CONFIG: dict[str, Any] = {
    "font": "sans-serif",
    "axis": {"labelFontSize": 12, "titleFontSize": 13, "titleFontWeight": "normal"},
    "legend": {"labelFontSize": 12, "titleFontSize": 13},
    "header": {"labelFontSize": 13},
}


def svg(spec: dict[str, Any], width: int | None = None) -> str:
    """The chart drawn as SVG by vl-convert (Vega-Lite's own renderer, run on the server),
    `width` pixels wide for its plot when given.

    The pages show it as an image: a page with Vega charts holds the browser while it
    starts Vega and draws them (bench_pages); an image costs it only the decoding. The
    first chart a process draws starts vl-convert's engine, slow and large; each later
    one takes time that grows with the releases drawn, and the pages cache them.
    """
    import vl_convert

    drawn = {**spec, "config": {**spec.get("config", {}), **SVG_CONFIG}}
    if width is not None:
        drawn["width"] = width
    text: str = vl_convert.vegalite_to_svg(drawn, allowed_base_urls=[])
    return text


def failure(exc: Exception) -> str:
    """Why a chart could not be drawn, on one line: the note a page or packet shows in its
    place."""
    return one_line(f"{type(exc).__name__}: {exc}", 200)


def _as_floats(frame: pd.DataFrame, *columns: str) -> pd.DataFrame:
    """UNKNOWN cells arrive as None; Vega-Lite wants numbers or nulls (NaN)."""
    return frame.assign(**{c: frame[c].astype(float) for c in columns})


def _interval_name(method: str) -> str:
    return {
        "cluster-bootstrap": "cluster bootstrap over cases",
        "wilson": "Wilson (all cases equal)",
    }.get(method, "UNKNOWN")


def case_chart(story: pd.DataFrame) -> alt.Chart:
    """One case's pass rate (passes / runs) in each release of its suite; releases without
    the case or where it was not evaluated are gaps, not zeros."""
    frame = story.assign(pass_rate=story["pass_rate"].astype(float))
    order = list(story.sort_values("release_rank")["release"])
    base = alt.Chart(frame).encode(
        x=alt.X("release:N", sort=order, title="release"),
        y=alt.Y("pass_rate:Q", axis=PERCENT, scale=alt.Scale(domain=[0, 1]), title="pass rate"),
        tooltip=[
            alt.Tooltip("release:N"),
            alt.Tooltip("cell:N", title="passes/runs"),
            alt.Tooltip("change:N", title="against the release before"),
        ],
    )
    return (base.mark_line(color="#1f6feb") + base.mark_point(filled=True, size=60)).properties(
        height=200
    )
