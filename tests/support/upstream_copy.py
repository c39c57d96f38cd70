"""multivon-eval 0.20.0's own arithmetic, copied verbatim in substance (Apache-2.0): the
slow, obvious oracle the stats tests compare the vectorised code against.

Sources: passk.py (pass_at_k, pass_hat_k, _quantile, _cluster_bootstrap_ci),
experiments.py (_norm_ppf, wilson_interval), result.py (EvalReport._pass_k_result).
"""

from __future__ import annotations

import math
import random
from math import comb

METRIC_PASS_AT_K = "pass@k"


def norm_ppf(p: float) -> float:
    p = max(1e-9, min(1 - 1e-9, p))
    x = 0.0
    for _ in range(50):
        fx = (1 + math.erf(x / math.sqrt(2))) / 2 - p
        dfx = math.exp(-x * x / 2) / math.sqrt(2 * math.pi)
        if dfx == 0:
            break
        x -= fx / dfx
    return x


def wilson_interval(pass_count: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    z = norm_ppf(1 - (1 - confidence) / 2)
    p_hat = pass_count / n
    z2 = z * z
    denom = 1 + z2 / n
    center = (p_hat + z2 / (2 * n)) / denom
    margin = (z * math.sqrt(p_hat * (1 - p_hat) / n + z2 / (4 * n * n))) / denom
    return (max(0.0, center - margin), min(1.0, center + margin))


def pass_at_k(n: int, c: int, k: int) -> float:
    if c == 0:
        return 0.0
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    if c < k:
        return 0.0
    return comb(c, k) / comb(n, k)


def quantile(sorted_vals: list[float], q: float) -> float:
    idx = q * (len(sorted_vals) - 1)
    lo = int(idx)
    hi = min(lo + 1, len(sorted_vals) - 1)
    frac = idx - lo
    return sorted_vals[lo] * (1 - frac) + sorted_vals[hi] * frac


def cluster_bootstrap_ci(
    values: list[float], confidence: float, n_boot: int, seed: int
) -> tuple[float, float]:
    if min(values) == max(values):
        m = len(values)
        return wilson_interval(values[0] * m, m, confidence)
    rng = random.Random(seed)
    m = len(values)
    means = sorted(sum(rng.choice(values) for _ in range(m)) / m for _ in range(n_boot))
    alpha = 1 - confidence
    return quantile(means, alpha / 2), quantile(means, 1 - alpha / 2)


def pass_k_result(
    stats: list[tuple[int, int]],
    k: int,
    metric: str,
    confidence: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> tuple[float | None, float | None, float | None, int, str]:
    """(value, ci_low, ci_high, runs, unknown_reason) as EvalReport._pass_k_result gives."""
    if stats:
        min_n = min(n for n, _ in stats)
        if k > min_n:
            hetero = any(n != min_n for n, _ in stats)
            where = "the shortest-run case (early_stop)" if hetero else "each case"
            return (
                None,
                None,
                None,
                min_n,
                f"UNKNOWN — k={k} exceeds the {min_n} trials of {where}; "
                f"rerun with --runs >= {k} or pass k <= {min_n}. "
                f"multivon-eval does not extrapolate.",
            )
    else:
        return None, None, None, 0, "UNKNOWN — no evaluated cases to estimate from."
    estimator_fn = pass_at_k if metric == METRIC_PASS_AT_K else pass_hat_k
    values = [estimator_fn(n, c, k) for n, c in stats]
    point = sum(values) / len(values)
    ci_low, ci_high = cluster_bootstrap_ci(values, confidence, n_boot, seed)
    return point, min(ci_low, point), max(ci_high, point), min(n for n, _ in stats), ""
