"""Case identity across releases: which case of one release is which case of another.

Cases are matched by case_id where they have one (0.18+), else by input text, the rule
the case history, the compare ledger and the Releases page's Δ column all use. Case ids
change scheme across multivon-eval versions (0.18 derives `sha256:<digest>` when the
case names none; a later suite may name its cases `SUP-101`) while the inputs stay the
same: two releases that share no case id but share inputs are matched by input, and the
rule that matched them is returned so every page can say so. Plain rows and lists, no
DataFrame work per pair: the Releases page matches every pair of consecutive releases.

Must not: import Streamlit or Altair, hold SQL text, or estimate anything.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, Final

import numpy as np
import pandas as pd

from dashboard.analysis.estimates import is_missing

# how two releases' cases were matched (match_rule)
BY_CASE_ID: Final = "case id"
BY_INPUT: Final = "input"  # a release without case ids (before multivon-eval 0.18)
BY_INPUT_ACROSS_IDS: Final = "input (the two releases share no case id)"


def case_keys(cases: pd.DataFrame) -> pd.Series:
    """A key per case row that is shared by the same case in every release of a suite.

    Cases are matched by case_id where they have one (0.18+), so a later edit of the input
    under the same id still matches and two ids never merge, unless they are one case
    renamed: ids that share an input and never appear in one report together (a
    `sha256:` id in an old release, `SUP-101` in a newer one) take the id of the newest
    row. A case without an id (pre-0.18) matches by input text, and joins the id case with
    that input when exactly one id was ever seen with it.
    """
    reports = list(cases["report_id"]) if "report_id" in cases else None
    keys = case_key_list(list(cases["case_id"]), list(cases["input"]), reports)
    return pd.Series(keys, index=cases.index, dtype=object)


def _id_aliases(
    case_ids: Sequence[Any], inputs: Sequence[Any], reports: Sequence[Any]
) -> dict[str, str]:
    """id -> the id it is renamed to: the ids sharing one input that no report holds two
    of, each mapped to the one of the last row (rows come in release order)."""
    by_input: dict[str, dict[str, set[Any]]] = {}
    for case_id, text, report in zip(case_ids, inputs, reports, strict=True):
        if isinstance(case_id, str) and case_id and isinstance(text, str):
            by_input.setdefault(text, {}).setdefault(case_id, set()).add(report)
    aliases: dict[str, str] = {}
    for ids in by_input.values():
        if len(ids) < 2:
            continue
        holders = [r for held in ids.values() for r in held]
        if len(holders) != len(set(holders)):
            continue  # one report holds two of them: two cases with one input
        newest = list(ids)[-1]
        if any(aliases.get(case_id, newest) != newest for case_id in ids):
            continue  # an id renamed two ways: keep the ids apart rather than guess
        aliases.update(dict.fromkeys(ids, newest))
    return aliases


def case_key_list(
    case_ids: Sequence[Any], inputs: Sequence[Any], reports: Sequence[Any] | None = None
) -> list[str]:
    """case_keys over plain lists (the same rule, without a DataFrame); without `reports`
    (each row's report) ids are never joined to one another."""
    aliases = _id_aliases(case_ids, inputs, reports) if reports is not None else {}
    case_ids = [aliases.get(c, c) if isinstance(c, str) else c for c in case_ids]
    ids_by_input: dict[str, set[str]] = {}
    for case_id, text in zip(case_ids, inputs, strict=True):
        if isinstance(case_id, str) and case_id:
            ids_by_input.setdefault(text if isinstance(text, str) else "", set()).add(case_id)
    keys = []
    for case_id, text in zip(case_ids, inputs, strict=True):
        if isinstance(case_id, str) and case_id:
            keys.append("id:" + case_id)
            continue
        text = text if isinstance(text, str) else ""
        known = ids_by_input.get(text, set())
        keys.append("id:" + next(iter(known)) if len(known) == 1 else "input:" + text)
    return keys


def match_rule(base: Sequence[dict[str, Any]], head: Sequence[dict[str, Any]]) -> str:
    """How two releases' cases are matched: by case id, or by input where either release
    has no case ids, or where both have ids but share none while sharing inputs."""
    base_ids = {r["case_id"] for r in base if isinstance(r["case_id"], str) and r["case_id"]}
    head_ids = {r["case_id"] for r in head if isinstance(r["case_id"], str) and r["case_id"]}
    if not base_ids or not head_ids:
        return BY_INPUT
    if base_ids & head_ids:
        return BY_CASE_ID
    base_inputs = {r["input"] for r in base if isinstance(r["input"], str)}
    shared = any(isinstance(r["input"], str) and r["input"] in base_inputs for r in head)
    return BY_INPUT_ACROSS_IDS if shared else BY_CASE_ID


def story_link_key(match_key: str) -> str:
    """How a link names a case: its id, or a short digest of its input."""
    if match_key.startswith("id:"):
        return match_key[3:]
    return "h:" + hashlib.sha256(match_key.encode("utf-8")).hexdigest()[:12]


def with_occurrence(keys: Sequence[str], sides: Sequence[str]) -> list[str]:
    """Make keys unique within each release: the i-th case sharing a key gets '#i'.

    Two cases of one report with one input and no case_id are indistinguishable; they
    are paired with their counterparts in file order rather than dropped.
    """
    seen: dict[tuple[str, str], int] = {}
    out = []
    for key, side in zip(keys, sides, strict=True):
        seen[(side, key)] = seen.get((side, key), 0) + 1
        out.append(key if seen[(side, key)] == 1 else f"{key}#{seen[(side, key)]}")
    return out


def has_tag(row: dict[str, Any], tag: str) -> bool:
    tags = row.get("tags")
    return tags is not None and tag in [str(t) for t in tags]


def keyed_rows(
    base: Sequence[dict[str, Any]], head: Sequence[dict[str, Any]], tag: str | None
) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Each release's rows by case key (unique within the release), in file order, matched
    by match_rule."""
    rows = [("base", r) for r in base]
    rows += [("head", r) for r in head]
    if match_rule(base, head) == BY_INPUT_ACROSS_IDS:
        plain = ["input:" + (r["input"] if isinstance(r["input"], str) else "") for _, r in rows]
    else:
        plain = case_key_list([r["case_id"] for _, r in rows], [r["input"] for _, r in rows])
    keys = with_occurrence(plain, [side for side, _ in rows])
    if tag:
        keep = {key for (_, r), key in zip(rows, keys, strict=True) if has_tag(r, tag)}
        pairs = [(sr, key) for sr, key in zip(rows, keys, strict=True) if key in keep]
    else:
        pairs = list(zip(rows, keys, strict=True))
    base_rows = {key: r for (side, r), key in pairs if side == "base"}
    head_rows = {key: r for (side, r), key in pairs if side == "head"}
    return base_rows, head_rows


def paired_counts(
    base: Sequence[dict[str, Any]], head: Sequence[dict[str, Any]]
) -> tuple[np.ndarray, ...]:
    """(n_base, c_base, n_head, c_head) of the cases evaluated in both releases, in head's
    order: the pairs match_case_rows yields, without building the ledger (the Releases
    page needs only the change, for every pair of consecutive releases)."""
    base_rows, head_rows = keyed_rows(base, head, None)
    counts: list[tuple[int, int, int, int]] = []
    for key, h in head_rows.items():
        b = base_rows.get(key)
        if b is not None and not is_missing(b["n"]) and not is_missing(h["n"]):
            counts.append((int(b["n"]), int(b["c"]), int(h["n"]), int(h["c"])))
    columns = np.array(counts, dtype=np.int64).reshape(-1, 4).T
    return tuple(columns)
