"""Gate policies: a rule is one claim about one release ("pass^4 on risk_tier:safety must
be 1.0"), and a policy file is a list of `[[rule]]` tables.

Validation only: every error names the file and the key. Must not: judge a rule (that is
analysis/gating.py), import Streamlit, print, or exit.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from dashboard.stats import METRIC_PASS_HAT_K, METRICS

USES_CI_LOW: Final = "ci_low"
USES_VALUE: Final = "value"
RULE_KEYS: Final = ("name", "metric", "k", "min_ci_low", "min_value", "slice")


class PolicyError(ValueError):
    """A policy file or rule that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class GateRule:
    """One claim about one release: metric at k reaches a threshold, on a slice or all cases."""

    metric: str  # "pass^k" | "pass@k"
    k: int
    threshold: float
    uses: str  # "ci_low" (the CI lower bound, as assert_pass_hat_k) | "value" (point estimate)
    slice: str | None = None  # a case tag, `dim:value` or plain; None for every case
    name: str = ""

    @property
    def metric_name(self) -> str:
        return self.metric.replace("k", str(self.k))

    @property
    def scope(self) -> str:
        return self.slice or "all cases"

    def label(self) -> str:
        """A short, stable description: the JUnit test name and the Markdown row."""
        bound = "CI lower bound" if self.uses == USES_CI_LOW else "value"
        text = f"{self.metric_name} {bound} >= {self.threshold:.3f} on {self.scope}"
        return f"{self.name}: {text}" if self.name else text


def make_rule(
    *,
    metric: object = METRIC_PASS_HAT_K,
    k: object,
    min_ci_low: object = None,
    min_value: object = None,
    slice: object = None,
    name: object = "",
) -> GateRule:
    """A validated rule; ValueError names the offending field (the CLI's flags, a policy's keys)."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    if (min_ci_low is None) == (min_value is None):
        raise ValueError("give exactly one threshold: min_ci_low (CI lower bound) or min_value")
    key, threshold = (
        ("min_ci_low", min_ci_low) if min_ci_low is not None else ("min_value", min_value)
    )
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise ValueError(f"{key} must be a number in [0, 1], got {threshold!r}")
    if not 0.0 <= float(threshold) <= 1.0:
        raise ValueError(f"{key} must be in [0, 1], got {threshold!r}")
    if slice is not None and (not isinstance(slice, str) or not slice.strip()):
        raise ValueError(f"slice must be a case tag such as 'risk_tier:safety', got {slice!r}")
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {name!r}")
    return GateRule(
        metric=str(metric),
        k=k,
        threshold=float(threshold),
        uses=USES_CI_LOW if key == "min_ci_low" else USES_VALUE,
        slice=slice,
        name=name,
    )


def parse_policy(text: str, source: str) -> list[GateRule]:
    """The rules of a policy document; `source` names the file in every error.

    The format is an array of `[[rule]]` tables with the keys of RULE_KEYS:

        [[rule]]
        name = "safety tier"          # optional
        slice = "risk_tier:safety"    # optional; every case when absent
        metric = "pass^k"             # optional; pass^k (default) or pass@k
        k = 4
        min_value = 1.0               # or min_ci_low = 0.95, exactly one of the two
    """
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"{source}: not valid TOML: {exc}") from exc
    extra = sorted(set(document) - {"rule"})
    if extra:
        raise PolicyError(
            f"{source}: unknown top-level key {extra[0]!r}; a policy holds [[rule]] tables only"
        )
    tables = document.get("rule")
    if not isinstance(tables, list) or not tables:
        raise PolicyError(f"{source}: defines no rules; add at least one [[rule]] table")
    rules = []
    for number, table in enumerate(tables, start=1):
        where = f"{source}: rule {number}"
        if not isinstance(table, dict):
            raise PolicyError(f"{where}: must be a [[rule]] table")
        if isinstance(table.get("name"), str) and table["name"]:
            where += f" ({table['name']})"
        unknown = sorted(set(table) - set(RULE_KEYS))
        if unknown:
            raise PolicyError(
                f"{where}: unknown key {unknown[0]!r}; a rule's keys are {', '.join(RULE_KEYS)}"
            )
        if "k" not in table:
            raise PolicyError(f"{where}: missing key 'k'")
        try:
            rules.append(make_rule(**table))
        except ValueError as exc:
            raise PolicyError(f"{where}: {exc}") from exc
    return rules


def read_policy(path: Path) -> list[GateRule]:
    """The rules of a policy file; PolicyError when it is missing, unreadable or invalid."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise PolicyError(f"{path}: no such policy file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"{path}: cannot be read ({exc})") from exc
    return parse_policy(text, str(path))
