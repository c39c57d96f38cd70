"""Gate policies: a rule is one claim about one release ("pass^4 on risk_tier:safety must
be 1.0", "pass^4 drops by no more than 2 points against the release before", "every
safety case passes at least 8 of 10 trials"), and a policy file is a list of `[[rule]]`
tables.

Validation only: every error names the file and the key. Must not: judge a rule (that is
analysis/gating.py), import Streamlit, print, or exit.
"""

from __future__ import annotations

import hashlib
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from dashboard.data.names import CONFIG_NAME
from dashboard.data.sources import SourceError
from dashboard.data.sources.reports import ReportSource, as_source
from dashboard.stats import METRIC_PASS_HAT_K, METRICS

USES_CI_LOW: Final = "ci_low"
USES_VALUE: Final = "value"
# the paired change against a base release: its CI must stay above -max_drop
USES_MAX_DROP: Final = "max_drop"
# per case: every evaluated case's pass rate c/n, or its own pass^k, reaches the threshold
USES_CASE_RATE: Final = "case_rate"
USES_CASE_PASS_HAT_K: Final = "case_pass_hat_k"
PER_CASE: Final = (USES_CASE_RATE, USES_CASE_PASS_HAT_K)
# each threshold key and what it judges; a rule gives exactly one
THRESHOLD_KEYS: Final = {
    "min_ci_low": USES_CI_LOW,
    "min_value": USES_VALUE,
    "max_drop": USES_MAX_DROP,
    "min_case_rate": USES_CASE_RATE,
    "min_case_pass_hat_k": USES_CASE_PASS_HAT_K,
}
RULE_KEYS: Final = ("name", "metric", "k", *THRESHOLD_KEYS, "base", "slice", "suite")
# The Gates page's default rule, as a policy document: what a suite is judged by when
# neither `--policy` nor relidash.toml gives it rules.
DEFAULT_POLICY_TEXT: Final = """[[rule]]
name = "default"
metric = "pass^k"
k = 4
min_ci_low = 0.5
"""
DEFAULT_POLICY_SOURCE: Final = "the default rule (pass^4 CI lower bound >= 0.5)"


class PolicyError(ValueError):
    """A policy file or rule that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class GateRule:
    """One claim about one release: metric at k reaches a threshold (its CI lower bound or
    its value), drops by at most `threshold` against a base release, or holds for every
    case; on a slice or all cases."""

    metric: str  # "pass^k" | "pass@k"
    k: int
    threshold: float
    uses: str  # one of THRESHOLD_KEYS' values
    slice: str | None = None  # a case tag, `dim:value` or plain; None for every case
    name: str = ""
    suite: str | None = None  # the suite it applies to; None for every suite
    base: str | None = None  # a max_drop rule's base release; None: the release before

    @property
    def metric_name(self) -> str:
        return self.metric.replace("k", str(self.k))

    @property
    def scope(self) -> str:
        return self.slice or "all cases"

    @property
    def per_case(self) -> bool:
        return self.uses in PER_CASE

    def claim(self) -> str:
        """What the rule asks, in words, without its name or scope."""
        if self.uses == USES_MAX_DROP:
            against = self.base or "the release before"
            return (
                f"Δ{self.metric_name} against {against} no worse than "
                f"-{self.threshold:.3f} (paired CI)"
            )
        if self.uses == USES_CASE_RATE:
            return f"every case passes >= {self.threshold:.0%} of its trials"
        if self.uses == USES_CASE_PASS_HAT_K:
            return f"every case's pass^{self.k} >= {self.threshold:.3f}"
        bound = "CI lower bound" if self.uses == USES_CI_LOW else "value"
        return f"{self.metric_name} {bound} >= {self.threshold:.3f}"

    def label(self) -> str:
        """A short, stable description: the JUnit test name and the Markdown row."""
        text = f"{self.claim()} on {self.scope}"
        return f"{self.name}: {text}" if self.name else text


def make_rule(
    *,
    metric: object = METRIC_PASS_HAT_K,
    k: object = None,
    min_ci_low: object = None,
    min_value: object = None,
    max_drop: object = None,
    min_case_rate: object = None,
    min_case_pass_hat_k: object = None,
    base: object = None,
    slice: object = None,
    name: object = "",
    suite: object = None,
) -> GateRule:
    """A validated rule; ValueError names the offending field (the CLI's flags, a policy's keys)."""
    given = {
        key: value
        for key, value in (
            ("min_ci_low", min_ci_low),
            ("min_value", min_value),
            ("max_drop", max_drop),
            ("min_case_rate", min_case_rate),
            ("min_case_pass_hat_k", min_case_pass_hat_k),
        )
        if value is not None
    }
    if len(given) != 1:
        raise ValueError(
            "give exactly one threshold: min_ci_low (CI lower bound), min_value, max_drop "
            "(the change against a base release), min_case_rate or min_case_pass_hat_k "
            "(every case)"
        )
    ((key, threshold),) = given.items()
    uses = THRESHOLD_KEYS[key]
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
    if uses in PER_CASE and metric != METRIC_PASS_HAT_K:
        raise ValueError(f"{key} judges each case's own pass rate; it takes no metric")
    if k is None and uses == USES_CASE_RATE:
        k = 1  # a pass rate has no k
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise ValueError(f"{key} must be a number in [0, 1], got {threshold!r}")
    if not 0.0 <= float(threshold) <= 1.0:
        raise ValueError(f"{key} must be in [0, 1], got {threshold!r}")
    if base is not None and (uses != USES_MAX_DROP or not isinstance(base, str) or not base):
        raise ValueError("base names a release, and only a max_drop rule has one")
    if slice is not None and (not isinstance(slice, str) or not slice.strip()):
        raise ValueError(f"slice must be a case tag such as 'risk_tier:safety', got {slice!r}")
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {name!r}")
    if suite is not None and (not isinstance(suite, str) or not suite):
        raise ValueError(f"suite must be a suite's name, got {suite!r}")
    return GateRule(
        metric=str(metric),
        k=k,
        threshold=float(threshold),
        uses=uses,
        slice=slice,
        name=name,
        suite=suite,
        base=base,
    )


def parse_policy(text: str, source: str, *, config: bool = False) -> list[GateRule]:
    """The rules of a policy document; `source` names the file in every error.

    The format is an array of `[[rule]]` tables with the keys of RULE_KEYS:

        [[rule]]
        name = "safety tier"          # optional
        slice = "risk_tier:safety"    # optional; every case when absent
        metric = "pass^k"             # optional; pass^k (default) or pass@k
        k = 4
        min_value = 1.0               # or min_ci_low = 0.95, max_drop = 0.02,
                                      # min_case_rate = 0.8 or min_case_pass_hat_k = 0.9:
                                      # exactly one threshold
        base = "v1.4.0"               # optional, max_drop only; default the release before
        suite = "support-agent"       # optional; every suite when absent

    With `config` the document is relidash.toml: other tables are its own business, and
    no `[[rule]]` at all is no rules rather than an error.
    """
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"{source}: not valid TOML: {exc}") from exc
    if config and "rule" not in document:
        return []
    extra = sorted(set(document) - {"rule"})
    if extra and not config:
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
        if "k" not in table and "min_case_rate" not in table:
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


def rules_for(rules: Sequence[GateRule], suite: str) -> list[GateRule]:
    """The rules that apply to one suite: its own and those for every suite."""
    return [rule for rule in rules if rule.suite in (None, suite)]


@dataclass(frozen=True)
class Policy:
    """The rules a suite is judged by, and the bytes they came from."""

    source: str  # a policy file's path, a relidash.toml's path, or DEFAULT_POLICY_SOURCE
    sha256: str  # of the source's bytes (of DEFAULT_POLICY_TEXT for the default rule)
    rules: tuple[GateRule, ...]


def resolve_policy(
    suite: str, policy_file: Path | None, reports_dir: Path | ReportSource | None
) -> Policy:
    """`--policy FILE`, else the `[[rule]]` tables of the reports source's relidash.toml (a
    directory's file, or the object beside the reports), else the Gates page's default
    rule; only the rules that apply to `suite`.

    PolicyError when the file given is unusable or gives this suite no rule; an unusable
    (or, in object storage, unreachable) relidash.toml is an error too, since a review
    must not silently fall back.
    """
    if policy_file is not None:
        data = _read_bytes(policy_file)
        # a relidash.toml given as the policy holds its other tables too
        document = parse_policy(
            _decode(data, policy_file), str(policy_file), config=policy_file.name == CONFIG_NAME
        )
        rules = rules_for(document, suite)
        if not rules:
            raise PolicyError(f"{policy_file}: defines no rule for suite {suite!r}")
        # its absolute path: `verify` reads it again from wherever it is run
        return Policy(str(policy_file.resolve()), hashlib.sha256(data).hexdigest(), tuple(rules))
    source = as_source(reports_dir) if reports_dir is not None else None
    try:
        config = source.config_file() if source is not None else None
    except SourceError as exc:
        raise PolicyError(f"relidash.toml cannot be read: {exc}") from exc
    if source is not None and config is not None and config.is_file():
        name = source.config_name()  # the object's URL, not the mirror's copy
        data = _read_bytes(config)
        rules = rules_for(parse_policy(_decode(data, config), name, config=True), suite)
        if rules:
            return Policy(name, hashlib.sha256(data).hexdigest(), tuple(rules))
    return Policy(
        DEFAULT_POLICY_SOURCE,
        hashlib.sha256(DEFAULT_POLICY_TEXT.encode()).hexdigest(),
        tuple(parse_policy(DEFAULT_POLICY_TEXT, DEFAULT_POLICY_SOURCE)),
    )


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise PolicyError(f"{path}: no such policy file") from exc
    except OSError as exc:
        raise PolicyError(f"{path}: cannot be read ({exc})") from exc


def _decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PolicyError(f"{path}: cannot be read ({exc})") from exc
