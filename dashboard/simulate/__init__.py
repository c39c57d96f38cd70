"""Simulated multivon-eval report files, for benchmarks and demos (`relidash simulate`).

Role: write report files that multivon-eval itself could have written, from a seeded
simulated support agent: the 0.15 shape (v1, aggregates only) or the 0.20 shape
(`multivon.report/v2`, one content-addressed trial record per run, with the execution
and provider-evidence blobs that make real 0.19+ reports kilobytes per trial). Every
digest is computed the way multivon-eval computes it, and every summary field from the
cases the way its `EvalReport.to_json` does, so `EvalReport.from_dict` accepts the files
and relidash's loader cannot tell them from real ones.

Outcomes come from mulberry32 and nothing else: one draw per trial, in task order (all
runs of case 1, then case 2, ...), and a trial passes when its draw is below the case's
reliability. In the first release of a suite every case's reliability is `p` and the
stream is seeded with `seed` itself, so `--suites 1 --releases 1` is exactly the plain
generator (40 tasks, p = 0.85, 5 runs, seed 42 give pass@1 = 0.86, pass^5 = 0.45).
Later releases drift each case's reliability and add a few model errors; those choices,
transcript wording, latencies and ids come from separate mulberry32 streams, so they
never shift an outcome draw.

Must not: write outside the output directory, import DuckDB or Streamlit, or depend on
multivon-eval (the formats are reproduced here; tests check them against the package).

Modules: agent (random streams, templates, one trial), records (one case as written),
report (the summary block and whole document), writing (files on disk).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dashboard.simulate.settings import DEFAULTS, FORMATS

if TYPE_CHECKING:
    from dashboard.simulate.writing import SimulateError, simulate_reports

__all__ = ["DEFAULTS", "FORMATS", "SimulateError", "simulate_reports"]


def __getattr__(name: str) -> Any:
    """The writer on first use (PEP 562): the CLI builds its parser from the defaults
    alone, and every command would otherwise import the generator."""
    if name in ("SimulateError", "simulate_reports"):
        from dashboard.simulate import writing

        return getattr(writing, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
