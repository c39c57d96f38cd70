"""relidash's statistics layer: pure numpy, no I/O.

Per-case estimators (`estimators`), Wilson intervals (`intervals`), the cluster
bootstrap (`bootstrap`), suite-level results with honest UNKNOWNs (`passk`) and lottery
cases (`lottery`). Numbers equal multivon-eval 0.20.0's for the same cases.

Must not import pandas, DuckDB, Altair or Streamlit, nor read files: the data layer
hands it arrays of counts, in case order.

References: Chen et al. 2021, arXiv:2107.03374 (pass@k); Yao et al. 2024,
arXiv:2406.12045 (pass^k); Wilson 1927.
"""

from __future__ import annotations

from .bootstrap import (
    METHOD_BOOTSTRAP,
    METHOD_WILSON,
    cluster_bootstrap_ci,
    cpython_choice_indices,
)
from .estimators import (
    METRIC_PASS_AT_K,
    METRIC_PASS_HAT_K,
    METRICS,
    pass_at_k,
    pass_hat_k,
    pass_k_table,
)
from .intervals import norm_ppf, wilson_bounds, wilson_interval
from .lottery import lottery_mask, rank_flakiest, rank_lottery
from .passk import METHOD_UNKNOWN, NO_CASES_REASON, PassKResult, suite_pass_k, suites_pass_k

__all__ = [
    "METHOD_BOOTSTRAP",
    "METHOD_UNKNOWN",
    "METHOD_WILSON",
    "METRICS",
    "METRIC_PASS_AT_K",
    "METRIC_PASS_HAT_K",
    "NO_CASES_REASON",
    "PassKResult",
    "cluster_bootstrap_ci",
    "cpython_choice_indices",
    "lottery_mask",
    "norm_ppf",
    "pass_at_k",
    "pass_hat_k",
    "pass_k_table",
    "rank_flakiest",
    "rank_lottery",
    "suite_pass_k",
    "suites_pass_k",
    "wilson_bounds",
    "wilson_interval",
]
