"""Gate policies: a rule is one claim about one release ("pass^4 on risk_tier:safety must
be 1.0"), and a policy file is a list of `[[rule]]` tables.

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

from dashboard.data.sources import SourceError
from dashboard.data.sources.reports import ReportSource, as_source
from dashboard.stats import METRIC_PASS_HAT_K, METRICS

USES_CI_LOW: Final = "ci_low"
USES_VALUE: Final = "value"
RULE_KEYS: Final = ("name", "metric", "k", "min_ci_low", "min_value", "slice", "suite")
CONFIG_NAME: Final = "relidash.toml"  # the reports directory's settings (data/releases.py)
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
    """One claim about one release: metric at k reaches a threshold, on a slice or all cases."""

    metric: str  # "pass^k" | "pass@k"
    k: int
    threshold: float
    uses: str  # "ci_low" (the CI lower bound, as assert_pass_hat_k) | "value" (point estimate)
    slice: str | None = None  # a case tag, `dim:value` or plain; None for every case
    name: str = ""
    suite: str | None = None  # the suite it applies to; None for every suite

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
    suite: object = None,
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
    if suite is not None and (not isinstance(suite, str) or not suite):
        raise ValueError(f"suite must be a suite's name, got {suite!r}")
    return GateRule(
        metric=str(metric),
        k=k,
        threshold=float(threshold),
        uses=USES_CI_LOW if key == "min_ci_low" else USES_VALUE,
        slice=slice,
        name=name,
        suite=suite,
    )


def parse_policy(text: str, source: str, *, config: bool = False) -> list[GateRule]:
    """The rules of a policy document; `source` names the file in every error.

    The format is an array of `[[rule]]` tables with the keys of RULE_KEYS:

        [[rule]]
        name = "safety tier"          # optional
        slice = "risk_tier:safety"    # optional; every case when absent
        metric = "pass^k"             # optional; pass^k (default) or pass@k
        k = 4
        min_value = 1.0               # or min_ci_low = 0.95, exactly one of the two
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
