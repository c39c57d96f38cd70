"""The Calculator page's numbers: pass@k and pass^k from a known per-attempt rate, and
the unbiased estimators beside the plug-in forms for n trials with c passes.

Must not: import Streamlit or Altair, or format numbers for display.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dashboard.analysis.estimates import envelope_reading
from dashboard.stats import pass_at_k, pass_hat_k


def rate_curves(p: float, k_max: int) -> pd.DataFrame:
    """True pass@k = 1-(1-p)^k and pass^k = p^k for a known per-attempt success rate p."""
    ks = np.arange(1, k_max + 1)
    at = 1 - (1 - p) ** ks
    hat = p**ks
    return pd.DataFrame(
        {
            "k": ks,
            "pass_at_k": at,
            "pass_hat_k": hat,
            "envelope_points": (at - hat) * 100,
            "reading": [envelope_reading(w) for w in (at - hat) * 100],
        }
    )


def runs_estimates(n: int, c: int, k_max: int) -> pd.DataFrame:
    """From n trials with c passes: unbiased estimators beside the plug-in closed forms."""
    rows = []
    for k in range(1, min(k_max, n) + 1):
        rate = c / n
        rows.append(
            {
                "k": k,
                "pass_at_k": float(pass_at_k(n, c, k)),
                "plug_in_pass_at_k": 1 - (1 - rate) ** k,
                "pass_hat_k": float(pass_hat_k(n, c, k)),
                "plug_in_pass_hat_k": rate**k,
            }
        )
    return pd.DataFrame(rows)
