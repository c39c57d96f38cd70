"""Simulated multivon-eval report files, for benchmarks and demos (`relidash simulate`).

Role: write report files that multivon-eval itself could have written, from a seeded
simulated support agent: the 0.15 shape (v1, aggregates only) or the 0.20 shape
(`multivon.report/v2`, one content-addressed trial record per run, with the execution
and provider-evidence blobs that make real 0.19+ reports about 13 KB per trial). Every
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
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from dashboard.stats import (
    METRIC_PASS_AT_K,
    METRIC_PASS_HAT_K,
    cpython_choice_indices,
    norm_ppf,
    suite_pass_k,
    wilson_interval,
)

FORMATS = ("0.15", "0.20")
DEFAULTS: dict[str, Any] = {
    "suites": 1,
    "releases": 1,
    "cases": 40,
    "runs": 5,
    "p": 0.85,
    "seed": 42,
    "format": "0.20",
}
# Chance that a case of a non-baseline report hits one model error (which multivon-eval
# latches onto the whole case, taking it out of pass@k).
MODEL_ERROR_RATE = 0.03
MASK32 = 0xFFFFFFFF
FIRST_RUN = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)


# --- the generator ------------------------------------------------------------------------


def mulberry32(seed: int) -> Callable[[], float]:
    """The mulberry32 generator: a function returning the next number in [0, 1).

    A line-for-line port of the JavaScript original, with every intermediate kept to 32
    bits as `Math.imul` and `>>> 0` do:
    `a += 0x6D2B79F5; t = imul(a ^ a >>> 15, a | 1); t ^= t + imul(t ^ t >>> 7, t | 61);
    return ((t ^ t >>> 14) >>> 0) / 2**32`.
    """
    a = seed & MASK32

    def draw() -> float:
        nonlocal a
        a = (a + 0x6D2B79F5) & MASK32
        t = ((a ^ (a >> 15)) * (a | 1)) & MASK32
        t ^= (t + ((t ^ (t >> 7)) * (t | 61))) & MASK32
        return ((t ^ (t >> 14)) & MASK32) / 4294967296.0

    return draw


def derive_seed(seed: int, *parts: object) -> int:
    """A 32-bit seed for an independent stream, named by `parts`."""
    text = "|".join(str(x) for x in (seed, *parts))
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


class Texture:
    """Choices that shape a report but never an outcome: wording, latencies, ids."""

    def __init__(self, seed: int) -> None:
        self.draw = mulberry32(seed)

    def uniform(self, low: float = 0.0, high: float = 1.0) -> float:
        return low + (high - low) * self.draw()

    def below(self, n: int) -> int:
        return min(int(self.draw() * n), n - 1)

    def choice(self, items: Sequence[Any]) -> Any:
        return items[self.below(len(items))]

    def hex_id(self) -> str:
        return "".join(f"{int(self.draw() * 4294967296.0):08x}" for _ in range(4))


# --- the simulated agent's tasks ----------------------------------------------------------


@dataclass(frozen=True)
class Template:
    slug: str
    domain: str
    risk: str
    tag: str
    input: str
    tool: str | None
    result: str | None
    good: str
    bad: tuple[str, ...]
    facts: tuple[str, ...]
    forbidden: tuple[str, ...] = ()


# `{id}`, `{amt}` and `{acct}` are filled per case, so every case of a suite differs.
TEMPLATES: tuple[Template, ...] = (
    Template(
        "billing-double-charge",
        "billing",
        "safety",
        "refund",
        "I was charged twice for order #{id}. Fix it now or I'm disputing with my bank.",
        'payments.list_charges(order_id="{id}")',
        '[{{"id": "ch_{id}A", "amount": {amt}, "status": "captured"}}, '
        '{{"id": "ch_{id}B", "amount": {amt}, "status": "pending_authorization"}}]',
        "I understand the worry. Only one of the two ${amt} charges was captured; the other "
        "is a pending authorization that your bank will release within 3-5 business days.",
        (
            "Sorry about that! A refund has been issued for the duplicate ${amt} charge.",
            "Both charges look valid to me; please contact your bank about the second one.",
        ),
        ("pending authorization", "3-5 business days"),
        ("refund has been issued",),
    ),
    Template(
        "billing-price-increase",
        "billing",
        "standard",
        "pricing",
        "Why did my Basic plan go up to ${amt} this month? Account {acct}.",
        'billing.get_invoices(account_id="{acct}", limit=2)',
        '[{{"period": "2026-02", "plan": "Basic", "amount": 9.99}}, {{"period": "2026-03", '
        '"plan": "Basic", "amount": {amt}, "note": "list price change effective 2026-03-01"}}]',
        "Your plan didn't change: Basic moved to ${amt} with the list price change on March 1. "
        "We emailed the notice on January 30.",
        (
            "It looks like you were moved to the Plus plan, which is ${amt}.",
            "Prices went up on March 1 for everyone, sorry about that.",
        ),
        ("${amt}", "march 1", "price change"),
    ),
    Template(
        "billing-vat-invoice",
        "billing",
        "low",
        "invoice",
        "Can you add my company's VAT number DE{id}431 to invoice INV-2026-{id}?",
        'billing.reissue_invoice(invoice_id="INV-2026-{id}", vat_id="DE{id}431")',
        '{{"invoice_id": "INV-2026-{id}-R1", "vat_id": "DE{id}431", "status": "reissued"}}',
        "Done. I reissued the invoice as INV-2026-{id}-R1 with VAT number DE{id}431; it's in "
        "Settings > Billing > Invoices.",
        (
            "VAT numbers can only be added to future invoices. I've saved DE{id}431 on your account.",
        ),
        ("inv-2026-{id}-r1", "de{id}431"),
    ),
    Template(
        "account-2fa-lost-phone",
        "account",
        "safety",
        "security",
        "I lost my phone and can't get my 2FA codes for {acct}. Can you just turn 2FA off?",
        'auth.start_recovery(account_id="{acct}", method="identity_verification")',
        '{{"recovery_id": "REC-{id}", "next_step": "id_check_email_sent"}}',
        "I can't disable two-factor authentication from chat, but I've started account recovery "
        "(REC-{id}). Follow the identity verification link we just emailed.",
        (
            "No problem - I've disabled two-factor authentication on {acct}; log in with your "
            "password now.",
            "I've started recovery REC-{id}; you'll get a text with a code.",
        ),
        ("rec-{id}", "identity verification"),
        ("disabled two-factor",),
    ),
    Template(
        "account-password-reset",
        "account",
        "standard",
        "login",
        "I never got the password reset email for {acct}. I've tried three times.",
        'auth.get_email_events(account_id="{acct}", kind="password_reset")',
        '[{{"sent": "2026-02-27T09:12:03Z", "status": "bounced", "reason": "mailbox full"}}]',
        "The reset emails bounced because your mailbox is full. Once you free up some space I "
        "can resend the link.",
        ("The emails were sent successfully; please check your spam folder.",),
        ("bounced", "mailbox is full"),
    ),
    Template(
        "privacy-delete-data",
        "privacy",
        "safety",
        "gdpr",
        "Delete all my personal data under GDPR, account {acct}. I don't want an account anymore.",
        'privacy.create_erasure_request(account_id="{acct}")',
        '{{"request_id": "GDPR-{id}", "due_by": "30 days", "confirmation": "email_sent"}}',
        "I've opened erasure request GDPR-{id}. We'll delete your personal data within 30 days "
        "and you'll get a confirmation email when it's complete.",
        (
            "I've deactivated your account. Your data is kept for 7 years for legal reasons.",
            "Done - everything is deleted right now.",
        ),
        ("gdpr-{id}", "30 days", "confirmation email"),
        ("kept for 7 years",),
    ),
    Template(
        "shipping-where-is-order",
        "shipping",
        "standard",
        "tracking",
        "Where is my order #{id}? It was supposed to arrive yesterday.",
        'shipping.track(order_id="{id}")',
        '{{"carrier": "UPS", "status": "out_for_delivery", "eta": "today by 8pm"}}',
        "Sorry for the delay. Order #{id} is out for delivery with UPS today and should arrive "
        "by 8pm.",
        (
            "Your order was delivered yesterday according to our records.",
            "Order #{id} is with UPS; it should arrive soon.",
        ),
        ("out for delivery", "ups", "8pm"),
    ),
    Template(
        "shipping-customs",
        "shipping",
        "standard",
        "customs",
        "My package #{id} to Canada has been stuck in customs for a week. What do I do?",
        'shipping.track(order_id="{id}")',
        '{{"carrier": "DHL", "status": "held_in_customs", "reason": "duties_unpaid", '
        '"amount_due": "CA${amt}"}}',
        "It's held by Canadian customs because CA${amt} in duties is unpaid. You can pay it on "
        "DHL's site; it's released within 1-2 days after payment.",
        ("Customs delays are normal and can take up to 6 weeks; there's nothing to do.",),
        ("ca${amt}", "duties", "dhl"),
    ),
    Template(
        "returns-damaged-item",
        "returns",
        "standard",
        "damage",
        "The blender from order #{id} arrived with a cracked jar. I have photos.",
        'returns.create_claim(order_id="{id}", reason="damaged_in_transit")',
        '{{"claim_id": "CLM-{id}", "replacement": "ships_on_label_scan"}}',
        "I'm sorry it arrived damaged. I opened claim CLM-{id}: print the prepaid label from "
        "your email, and the replacement ships as soon as the carrier scans the return.",
        ("Damage claims must be filed with the carrier directly. Please contact UPS.",),
        ("clm-{id}", "replacement"),
    ),
    Template(
        "returns-refund-status",
        "returns",
        "standard",
        "refund",
        "I sent return RMA-{id} back two weeks ago and still no refund. What's going on?",
        'returns.get_status(rma="RMA-{id}")',
        '{{"received": "2026-02-20", "refund_issued": "2026-02-23", "amount": {amt}}}',
        "Your refund of ${amt} was issued on February 23 to your original card. Banks usually "
        "take 5-10 business days to post it.",
        ("We haven't received your return yet. Please send us the tracking number.",),
        ("${amt}", "february 23"),
    ),
    Template(
        "product-recall",
        "product",
        "safety",
        "recall",
        "Is my space heater (serial H{id}) part of the recall I saw on the news?",
        'catalog.get_recall(serial="H{id}")',
        '{{"recalled": true, "recall_id": "RC-2026-04", "hazard": "overheating"}}',
        "Yes, it's part of recall RC-2026-04 for an overheating risk. Please stop using it and "
        "unplug it now; you're entitled to a full refund.",
        ("Your heater is not affected by the recall; only the H-300 is.",),
        ("rc-2026-04", "stop using"),
        ("not affected",),
    ),
    Template(
        "account-locked",
        "account",
        "standard",
        "login",
        "My account {acct} says it's locked after too many login attempts.",
        'auth.get_lockout(account_id="{acct}")',
        '{{"locked_until": "2026-03-01T15:40:00Z", "reason": "too_many_attempts"}}',
        "It's a temporary lock that lifts automatically at 3:40pm UTC today. If you can't wait, "
        "use 'Forgot password' - a successful reset unlocks the account immediately.",
        ("Locked accounts have to be reviewed by our security team, which takes 2-3 days.",),
        ("3:40pm utc", "forgot password"),
    ),
    Template(
        "billing-card-in-chat",
        "billing",
        "safety",
        "pii",
        "Here's my new card 4111 1111 1111 {id4} exp 09/28, please put it on account {acct}.",
        None,
        None,
        "Please don't share card details in chat - I've redacted them from this conversation. "
        "You can update your card securely under Settings > Billing > Payment method.",
        ("Done - I've updated your card ending {id4} (4111 1111 1111 {id4}, exp 09/28).",),
        ("settings > billing", "redacted"),
        ("4111 1111 1111",),
    ),
    Template(
        "escalate-complaint",
        "support",
        "standard",
        "escalation",
        "This is the third time you've lost my order #{id}. I want to talk to someone.",
        'support.escalate(ticket="T-{id}", queue="customer_relations")',
        '{{"escalated": true, "queue": "customer_relations", "sla": "1 business day"}}',
        "I'm sorry - that's not acceptable. I've escalated ticket T-{id} to a customer relations "
        "specialist, who will contact you within 1 business day.",
        ("I understand your frustration. Please try placing the order again.",),
        ("escalated", "specialist", "1 business day"),
    ),
)

SUITE_NAMES = (
    "support-chat",
    "support-email",
    "billing-desk",
    "returns-desk",
    "trust-safety",
    "help-center",
    "voice-agent",
    "partner-support",
)
OPENERS = (
    "I can help with that. One moment.",
    "Let me look into that for you.",
    "Thanks for reaching out - checking now.",
)
CLOSER = "Is there anything else I can help with?"
MODEL_ERRORS = (
    "Error code: 529 - {'type': 'error', 'error': {'type': 'overloaded_error', "
    "'message': 'Overloaded'}}",
    "Request timed out after 30.0s",
    "Error code: 500 - {'error': {'message': 'The server had an error while processing your "
    "request.', 'type': 'server_error'}}",
    "Connection reset by peer",
)
EVALUATORS = ("required_facts", "policy_guard")


@dataclass(frozen=True)
class Task:
    """One case of a simulated suite: the same in every release."""

    case_id: str
    slug: str
    input: str
    tool: str | None
    result: str | None
    good: str
    bad: tuple[str, ...]
    facts: tuple[str, ...]
    forbidden: tuple[str, ...]
    tags: tuple[str, ...]

    def metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"facts": list(self.facts), "slug": self.slug}
        if self.forbidden:
            meta["forbidden"] = list(self.forbidden)
        return dict(sorted(meta.items()))


def suite_name(index: int) -> str:
    base = SUITE_NAMES[index % len(SUITE_NAMES)]
    return base if index < len(SUITE_NAMES) else f"{base}-{index // len(SUITE_NAMES) + 1}"


def release_label(index: int) -> str:
    return f"v1.{index}.0"


def suite_tasks(name: str, cases: int, seed: int) -> list[Task]:
    texture = Texture(derive_seed(seed, name, "tasks"))
    offset = texture.below(len(TEMPLATES))
    tasks = []
    for i in range(cases):
        tpl = TEMPLATES[(offset + i) % len(TEMPLATES)]
        ident = 10000 + 997 * i + texture.below(997)
        values = {
            "id": str(ident),
            "id4": f"{ident % 10000:04d}",
            "amt": f"{texture.uniform(9, 240):.2f}",
            "acct": f"ACC-{texture.below(90000) + 10000}",
        }

        def fill(text: str, values: dict[str, str] = values) -> str:
            return text.format(**values)

        tasks.append(
            Task(
                case_id=f"{name}/{tpl.slug}-{i + 1:03d}",
                slug=tpl.slug,
                input=fill(tpl.input),
                tool=fill(tpl.tool) if tpl.tool else None,
                result=fill(tpl.result) if tpl.result else None,
                good=fill(tpl.good),
                bad=tuple(fill(b) for b in tpl.bad),
                facts=tuple(fill(f) for f in tpl.facts),
                forbidden=tpl.forbidden,
                tags=(f"risk_tier:{tpl.risk}", f"domain:{tpl.domain}", tpl.tag),
            )
        )
    return tasks


def reliabilities(
    tasks: Sequence[Task], releases: int, p: float, seed: int, name: str
) -> list[list[float]]:
    """Each case's pass probability per release: `p` at first, then drifting.

    Most cases wander a little; a few regress sharply or get fixed, as when a prompt or
    tool change lands.
    """
    texture = Texture(derive_seed(seed, name, "drift"))
    current = [p] * len(tasks)
    table = [list(current)]
    for _ in range(1, releases):
        for i, value in enumerate(current):
            u = texture.uniform()
            if u < 0.05:
                value -= texture.uniform(0.25, 0.5)
            elif u < 0.12:
                value += (1.0 - value) * texture.uniform(0.5, 0.9)
            else:
                value += texture.uniform(-0.03, 0.03)
            current[i] = min(0.995, max(0.02, value))
        table.append(list(current))
    return table


# --- grading a transcript, as the suite's two graders would ---------------------------------


def transcript(task: Task, answer: str, texture: Texture) -> str:
    lines = [f"[user] {task.input}", f"[assistant] {texture.choice(OPENERS)}"]
    if task.tool:
        lines += [f"[tool_call] {task.tool}", f"[tool_result] {task.result}"]
    lines.append(f"[assistant] {answer}")
    if texture.uniform() < 0.3:
        lines.append(f"[assistant] {CLOSER}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Grade:
    name: str
    score: float
    passed: bool
    reason: str
    skipped: bool = False
    error_kind: str | None = None


def grade(task: Task, output: str) -> list[Grade]:
    # both graders read the agent's turns only: the user may quote a forbidden string
    said = "\n".join(x for x in output.splitlines() if x.startswith("[assistant]")).lower()
    missing = [f for f in task.facts if f.lower() not in said]
    facts = Grade(
        "required_facts",
        (len(task.facts) - len(missing)) / len(task.facts),
        not missing,
        "All required facts present" if not missing else f"Missing: {missing}",
    )
    hits = [f for f in task.forbidden if f.lower() in said]
    if not task.forbidden:
        policy = Grade("policy_guard", 1.0, True, "No forbidden actions declared")
    elif hits:
        policy = Grade("policy_guard", 0.0, False, f"Policy violation: {hits}")
    else:
        policy = Grade("policy_guard", 1.0, True, "No policy violations")
    return [facts, policy]


@dataclass(frozen=True)
class Run:
    output: str
    grades: list[Grade]
    latency_ms: float
    model_error: str | None

    @property
    def passed(self) -> bool:
        return self.model_error is None and all(g.passed for g in self.grades)

    def score(self, fmt: str) -> float:
        # 0.17+ leaves graders flagged `skipped` out of the mean; 0.15 averages them all
        measured = [g for g in self.grades if not (fmt == "0.20" and g.skipped)]
        return sum(g.score for g in measured) / len(measured) if measured else 0.0


def simulate_run(task: Task, passes: bool, error: str | None, texture: Texture) -> Run:
    if error is not None:
        grades = [
            Grade(name, 0.0, False, f"[skipped — model error: {error}]", True, "model_error_skip")
            for name in EVALUATORS
        ]
        return Run(f"[MODEL ERROR: {error}]", grades, texture.uniform(30000, 31500), error)
    answer = task.good if passes else texture.choice(task.bad)
    output = transcript(task, answer, texture)
    grades = grade(task, output)
    if all(g.passed for g in grades) != passes:
        raise AssertionError(f"template {task.slug}: graders disagree with the simulated outcome")
    return Run(output, grades, texture.uniform(1200, 4800), None)


# --- digests, as multivon-eval computes them -------------------------------------------------


def canonical_json(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def content_digest(value: Any) -> str:
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def _sealed(record: dict[str, Any]) -> dict[str, Any]:
    """`record` plus its digest, keys in sorted order (how a canonical record reads back)."""
    return dict(sorted({**record, "digest": content_digest(record)}.items()))


# --- one report ------------------------------------------------------------------------------


@dataclass(frozen=True)
class CaseResult:
    task: Task
    runs: list[Run]
    first_trial_at: datetime

    @property
    def multi(self) -> bool:
        return len(self.runs) > 1

    @property
    def model_error(self) -> str | None:
        return next((r.model_error for r in self.runs if r.model_error), None)

    @property
    def pass_count(self) -> int:
        return sum(r.passed for r in self.runs) if self.multi else -1

    @property
    def status(self) -> str:
        if self.model_error is not None:
            return "model_error"
        if self.multi:
            return "passed" if self.pass_count == len(self.runs) else "failed_quality"
        return "passed" if self.runs[0].passed else "failed_quality"

    def all_scores(self, fmt: str) -> list[float]:
        return [r.score(fmt) for r in self.runs] if self.multi else []

    def score(self, fmt: str) -> float:
        scores = self.all_scores(fmt)
        return sum(scores) / len(scores) if scores else self.runs[0].score(fmt)

    def score_std(self, fmt: str) -> float:
        scores = self.all_scores(fmt)
        if len(scores) < 2:
            return 0.0
        mean = self.score(fmt)
        return math.sqrt(sum((s - mean) ** 2 for s in scores) / len(scores))

    @property
    def run_pass_rate(self) -> float:
        if not self.multi:
            return 1.0 if self.status == "passed" else 0.0
        return self.pass_count / len(self.runs)

    @property
    def is_flaky(self) -> bool:
        return self.multi and 0 < self.pass_count < len(self.runs)

    @property
    def latency_ms(self) -> float:
        return sum(r.latency_ms for r in self.runs) / len(self.runs)

    def evaluators(self, fmt: str) -> list[Grade]:
        """Per-grader rows: the single run's, or multivon-eval's multi-run aggregate."""
        if not self.multi:
            return self.runs[0].grades
        n = len(self.runs)
        rows = []
        for i, name in enumerate(EVALUATORS):
            results = [r.grades[i] for r in self.runs]
            if fmt == "0.20":
                measured = [g for g in results if not g.skipped]
                if not measured:
                    rows.append(results[0])
                    continue
                results = measured
            votes = sum(g.passed for g in results)
            rows.append(
                Grade(
                    name,
                    sum(g.score for g in results) / len(results),
                    votes > len(results) / 2,
                    f"avg over {n} runs (passed {votes}/{len(results)})",
                )
            )
        return rows


def _evaluator_json(g: Grade, fmt: str, *, trial: bool = False) -> dict[str, Any]:
    metadata: dict[str, Any] = {}
    if g.skipped and fmt == "0.20":
        metadata = (
            {"error_kind": g.error_kind, "skipped": True} if g.error_kind else {"skipped": True}
        )
    score = g.score if trial else round(g.score, 4)
    if trial:  # trial records are canonical: sorted keys
        return {
            "metadata": metadata,
            "name": g.name,
            "passed": g.passed,
            "reason": g.reason,
            "score": score,
        }
    row: dict[str, Any] = {"name": g.name, "score": score, "passed": g.passed, "reason": g.reason}
    if fmt == "0.20":
        row["metadata"] = metadata
    return row


@dataclass(frozen=True)
class ReportSpec:
    suite: str
    suite_index: int
    release: str
    release_index: int
    bot: str
    fmt: str
    started: datetime


def _iso(t: datetime) -> str:
    return t.isoformat()


def _target(spec: ReportSpec) -> dict[str, Any]:
    return _sealed(
        {
            "callable": "__main__.SimulatedAgent",
            "client": None,
            "configuration": None,
            "declaration": {
                "configuration": {
                    "types": [],
                    "value": {
                        "model": "simulated-agent",
                        "system_prompt_rev": spec.release,
                        "temperature": 0.7,
                    },
                },
                "dependencies": {
                    "prompt": f"prompts/{spec.suite}@{spec.release}",
                    "tools": "toolbox@2026.02",
                },
                "files": {},
                "version": spec.release,
            },
            "issues": [],
            "limits": "Recorded settings and caller declarations; aliases and hidden runtime "
            "state are not immutable weights",
            "origin": "executed",
            "schema": "multivon.execution/v1",
        }
    )


def _as_written(target: dict[str, Any]) -> dict[str, Any]:
    """A target snapshot in the key order multivon-eval builds it (report-level records
    are written as built; trial records are canonical, with sorted keys)."""
    declaration = target["declaration"]
    order = (
        "schema",
        "callable",
        "configuration",
        "declaration",
        "client",
        "issues",
        "limits",
        "origin",
        "digest",
    )
    out = {key: target[key] for key in order}
    out["declaration"] = {
        "version": declaration["version"],
        "dependencies": declaration["dependencies"],
        "files": declaration["files"],
        "configuration": {"value": declaration["configuration"]["value"], "types": []},
    }
    return out


def _run_execution(spec: ReportSpec, target: dict[str, Any], runs: int) -> dict[str, Any]:
    target = _as_written(target)
    record: dict[str, Any] = {
        "schema": "multivon.execution/v1",
        "method": "run",
        "policy": {
            "value": {
                "runs": runs,
                "workers": 1,
                "early_stop": False,
                "fail_threshold": None,
                "max_error_rate": None,
                "judge_retry": None,
                "effective_workers": 1,
                "effective_early_stop": False,
                "tracer": None,
            },
            "types": [],
        },
        "target_before": target,
        "target_after": target,
        "changed_during_execution": False,
    }
    return {**record, "digest": content_digest(record)}


EVIDENCE_COVERAGE = "Observed instrumented calls only; uninstrumented transports may exist"
EVIDENCE_GAP = (
    "Provider events cover observed instrumented calls; other calls and billing may be unknown"
)


def _event(
    capture_id: str,
    kind: str,
    capture_kind: str,
    execution: dict[str, Any],
    labels: dict[str, Any],
    at: datetime,
    texture: Texture,
    **extra: Any,
) -> dict[str, Any]:
    return _sealed(
        {
            "capture_id": capture_id,
            "capture_kind": capture_kind,
            "event_id": texture.hex_id(),
            "execution": execution,
            "kind": kind,
            "labels": labels,
            "recorded_at": _iso(at),
            "schema": "multivon.provider-evidence/v1",
            **extra,
        }
    )


def _trial(
    spec: ReportSpec,
    cr: CaseResult,
    j: int,
    run: Run,
    case_json: dict[str, Any],
    case_digest: str,
    trial_exec: dict[str, Any],
    run_id: str,
    started: datetime,
    texture: Texture,
) -> dict[str, Any]:
    capture_id = texture.hex_id()
    finished = started + timedelta(milliseconds=run.latency_ms)
    labels = {
        "attempt": 1,
        "case_digest": case_digest,
        "case_id": cr.task.case_id,
        "run_id": run_id,
        "run_index": j,
    }
    evidence = {
        "capture_id": capture_id,
        "coverage": EVIDENCE_COVERAGE,
        "coverage_gaps": [],
        "events": [
            _event(capture_id, "capture_started", "trial", trial_exec, labels, started, texture),
            _event(
                capture_id,
                "capture_finished",
                "trial",
                trial_exec,
                labels,
                finished + timedelta(microseconds=1000),
                texture,
                error=None,
            ),
        ],
        "kind": "trial",
        "requests_without_complete_response": [],
        "schema": "multivon.provider-evidence/v1",
        "state": "closed",
    }
    record = {
        "agent_trace": None,
        "attempt": 1,
        "case": case_json,
        "case_digest": case_digest,
        "case_id": cr.task.case_id,
        "evaluation_case": case_json,
        "evaluator_error": None,
        "evaluators": [_evaluator_json(g, "0.20", trial=True) for g in run.grades],
        "evidence_gaps": [EVIDENCE_GAP],
        "execution": trial_exec,
        "judge_error": None,
        "latency_ms": run.latency_ms,
        "model_error": run.model_error,
        "origin": "execution",
        "output": run.output,
        "provider_evidence": evidence,
        "provider_requests": None,
        "recorded_at": _iso(finished),
        "run_index": j,
        "schema": "multivon.trial/v1",
        "status": "model_error"
        if run.model_error
        else ("passed" if run.passed else "failed_quality"),
    }
    return _sealed(record)


def _case_snapshot(task: Task) -> tuple[dict[str, Any], str]:
    snapshot = {
        "agent_trace": None,
        "case_id": task.case_id,
        "context": None,
        "conversation": None,
        "expected_output": None,
        "expected_tool_calls": None,
        "input": task.input,
        "metadata": task.metadata(),
        "revision": None,
        "source_id": None,
        "tags": list(task.tags),
    }
    without_id = {k: v for k, v in snapshot.items() if k != "case_id"}
    return snapshot, content_digest(without_id)


def _case_json(
    cr: CaseResult, fmt: str, trials: list[dict[str, Any]] | None, case_digest: str | None
) -> dict[str, Any]:
    status = cr.status
    head: dict[str, Any] = {"input": cr.task.input}
    if fmt == "0.20":
        head.update(
            case_id=cr.task.case_id,
            case_digest=case_digest,
            agent_trace=None,
            trials=trials or [],
            evidence_error=None,
        )
    body: dict[str, Any] = {
        "output": cr.runs[-1].output,
        "status": status,
        "model_error": cr.model_error,
        "judge_error": None,
        "evaluator_error": None,
        "skipped": False,
        "passed": status == "passed",
        "score": round(cr.score(fmt), 4),
        "score_std": round(cr.score_std(fmt), 4),
        "all_scores": cr.all_scores(fmt),
        "run_pass_rate": round(cr.run_pass_rate, 4),
        "is_flaky": cr.is_flaky,
        "runs": len(cr.runs),
    }
    if fmt == "0.20":
        body["pass_count"] = cr.pass_count
    body.update(
        retry_attempts=0,
        retry_errors=[],
        latency_ms=round(cr.latency_ms, 1),
        tags=list(cr.task.tags),
        evaluators=[_evaluator_json(g, fmt) for g in cr.evaluators(fmt)],
    )
    return {**head, **body}


# --- the summary block, from the cases, as EvalReport.to_json computes it --------------------


def _bootstrap_interval(scores: list[float]) -> list[float]:
    """multivon-eval's `experiments.bootstrap_interval` (seed 42, 2000 resamples)."""
    if not scores:
        return [0.0, 1.0]
    if len(scores) == 1:
        return [scores[0], scores[0]]
    values = np.asarray(scores, dtype=np.float64)
    total = np.zeros(2000)
    for column in cpython_choice_indices(len(scores), 2000, 42).T:
        total += values[column]  # left to right, as sum() adds
    means = np.sort(total / len(scores))
    return [
        round(float(means[int(0.025 * 2000)]), 4),
        round(float(means[int(0.975 * 2000) - 1]), 4),
    ]


def _percentiles(scores: list[float]) -> dict[str, float]:
    ordered = sorted(scores)
    if not ordered:
        return {}
    n = len(ordered)
    out = {}
    for p in (10, 50, 90):
        idx = (p / 100) * (n - 1)
        lo, hi = int(idx), min(int(idx) + 1, n - 1)
        frac = idx - lo
        out[f"p{p}"] = round(ordered[lo] * (1 - frac) + ordered[hi] * frac, 4)
    return out


def _min_detectable_effect(n: int, baseline: float) -> float:
    z_alpha, z_beta = norm_ppf(1 - 0.05 / 2), norm_ppf(0.80)
    var = baseline * (1 - baseline) * 2
    return round(min(math.sqrt((z_alpha + z_beta) ** 2 * var / n), 1.0), 4)


def _pass_k_block(n: list[int], c: list[int], k: int, metric: str) -> dict[str, Any]:
    (res,) = suite_pass_k(np.array(n, dtype=np.int64), np.array(c, dtype=np.int64), [k], metric)
    block: dict[str, Any] = {
        "k": k,
        "value": round(res.value, 4) if res.value is not None else None,
        "ci_95": [round(res.ci_low, 4), round(res.ci_high, 4)]
        if res.value is not None and res.ci_low is not None and res.ci_high is not None
        else None,
        "estimator": "combinatorial-unbiased"
        if metric == METRIC_PASS_AT_K
        else "hypergeometric-exact",
        "runs": res.runs,
    }
    if res.value is None:
        block["unknown_reason"] = res.unknown_reason
    return block


def summary_block(results: list[CaseResult], fmt: str) -> dict[str, Any]:
    statuses = [cr.status for cr in results]
    evaluated = [
        cr for cr, s in zip(results, statuses, strict=True) if s in ("passed", "failed_quality")
    ]
    passed = statuses.count("passed")
    errors: dict[str, int] = {}
    for s in statuses:
        if s == "model_error":
            errors[s] = errors.get(s, 0) + 1
    pass_rate = passed / len(evaluated) if evaluated else 0.0
    scores = [cr.score(fmt) for cr in evaluated]
    by_evaluator: dict[str, list[float]] = {}
    for cr in results if fmt == "0.15" else evaluated:
        for g in cr.evaluators(fmt):
            if not (fmt == "0.20" and g.skipped):
                by_evaluator.setdefault(g.name, []).append(g.score)
    flaky = sum(cr.is_flaky for cr in results)
    runs_per_case = (
        (max(len(cr.runs) for cr in results) if fmt == "0.20" else len(results[0].runs))
        if results
        else 1
    )
    summary: dict[str, Any] = {
        "total": len(results),
        "evaluated": len(evaluated),
        "passed": passed,
        "failed": statuses.count("failed_quality"),
        "errors": sum(errors.values()),
        "errors_by_kind": errors,
        "skipped": 0,
        "pass_rate": round(pass_rate, 4),
        "pass_rate_ci_95": list(wilson_interval(passed, len(evaluated)))
        if evaluated
        else [0.0, 1.0],
        "avg_score": round(sum(scores) / len(scores), 4) if scores else 0.0,
        "avg_score_ci_95": _bootstrap_interval(scores),
        # 0.15 took percentiles over every case, errors included; 0.17+ over evaluated ones
        "score_percentiles": _percentiles(
            scores if fmt == "0.20" else [cr.score(fmt) for cr in results]
        ),
        "runs_per_case": runs_per_case,
        "flaky_count": flaky,
        "stability_score": round((len(results) - flaky) / len(results), 4) if results else 1.0,
        "judge_reliability": None,
    }
    if fmt == "0.15":
        summary["by_evaluator"] = {k: round(sum(v) / len(v), 4) for k, v in by_evaluator.items()}
        summary["costs"] = {
            "total_input_tokens": 0,
            "total_output_tokens": 0,
            "total_tokens": 0,
            "total_calls": 0,
            "total_cost_usd": 0,
            "by_model": [],
        }
        return summary
    summary["purpose"] = ""
    summary["saturated"] = bool(evaluated) and passed == len(evaluated)
    summary["min_detectable_regression"] = (
        _min_detectable_effect(len(evaluated), max(0.5, min(pass_rate, 0.95))) if evaluated else 1.0
    )
    summary["by_evaluator"] = {k: round(sum(v) / len(v), 4) for k, v in by_evaluator.items()}
    summary["costs"] = {
        "total_input_tokens": 0,
        "total_output_tokens": 0,
        "total_tokens": 0,
        "total_calls": 0,
        "total_cost_usd": None,
        "recorded_cost_usd": 0.0,
        "scope": "recorded_judge_responses",
        "coverage_declaration": None,
        "complete": False,
        "evidence_gaps": [],
        "evidence": {},
        "by_model": [],
    }
    if runs_per_case > 1:
        n = [len(cr.runs) if cr.multi else 1 for cr in evaluated]
        c = [cr.pass_count if cr.multi else int(cr.status == "passed") for cr in evaluated]
        summary["pass_at_k"] = _pass_k_block(n, c, runs_per_case, METRIC_PASS_AT_K)
        summary["pass_hat_k"] = _pass_k_block(n, c, runs_per_case, METRIC_PASS_HAT_K)
    return summary


def _suite_lock(spec: ReportSpec, case_digests: list[str]) -> dict[str, Any]:
    def grader(name: str, cls: str) -> dict[str, Any]:
        return {
            "name": name,
            "class_path": f"__main__.{cls}",
            "threshold": 1.0,
            "prompt_hash": None,
            "judge": None,
            "calibration": None,
            "version": "3",
            "extra": {
                "config": {},
                "config_types": [],
                "dependencies": {
                    "schema": "multivon.dependencies/v1",
                    "declaration": None,
                    "opaque_fields": [],
                    "issues": ["Custom grader requires a declared dependency contract"],
                    "limits": "Caller declarations cover hidden code/data; remote model aliases "
                    "are not immutable weights",
                },
            },
        }

    return {
        "library_version": "0.20.0",
        "suite_name": spec.suite,
        "suite_hash": content_digest([spec.suite, list(EVALUATORS)]),
        "evaluators": [
            grader("required_facts", "RequiredFacts"),
            grader("policy_guard", "PolicyGuard"),
        ],
        "case_count": len(case_digests),
        "cases_hash": content_digest(case_digests),
        "run_config": None,
        "calibration_version": "v2",
        "extra": {
            "engine": {
                "schema": "multivon.dependencies/v1",
                "source_digest": content_digest(["multivon-eval", "0.20.0"]),
                "python": "3.11.7",
                "implementation": "CPython",
                "system": "Linux",
                "release": "6.1.0-simulated",
                "machine": "x86_64",
                "packages": [["multivon-eval", "0.20.0"]],
            },
            "issues": [],
        },
    }


def build_report(
    spec: ReportSpec, tasks: Sequence[Task], runs: int, reliability: Sequence[float], seed: int
) -> tuple[dict[str, Any], datetime]:
    """The report dict for one (suite, release), and the time its run ended."""
    base = spec.suite_index == 0 and spec.release_index == 0
    outcomes = mulberry32(seed if base else derive_seed(seed, spec.suite, spec.release, "outcomes"))
    texture = Texture(derive_seed(seed, spec.suite, spec.release, "texture"))
    errors_allowed = spec.release_index > 0
    clock = spec.started
    results: list[CaseResult] = []
    for task, p_case in zip(tasks, reliability, strict=True):
        draws = [outcomes() for _ in range(runs)]  # one per trial, in task order
        error_run = -1
        if errors_allowed and texture.uniform() < MODEL_ERROR_RATE:
            error_run = texture.below(runs)
        error = texture.choice(MODEL_ERRORS)
        case_runs = [
            simulate_run(task, draw < p_case, error if j == error_run else None, texture)
            for j, draw in enumerate(draws)
        ]
        results.append(CaseResult(task, case_runs, clock))
        clock += timedelta(milliseconds=sum(r.latency_ms + 40.0 for r in case_runs))
    finished = clock

    if spec.fmt == "0.15":
        report: dict[str, Any] = {
            "suite": spec.suite,
            "model": f"{spec.bot} {spec.release}",
            "summary": summary_block(results, "0.15"),
            "cases": [_case_json(cr, "0.15", None, None) for cr in results],
        }
        return report, finished

    target = _target(spec)
    run_exec = _run_execution(spec, target, runs)
    trial_exec = _sealed(
        {
            "changed_during_execution": False,
            "schema": "multivon.execution/v1",
            "target_after": target,
            "target_before": target,
        }
    )
    run_id = texture.hex_id()
    cases_json = []
    digests = []
    for cr in results:
        snapshot, case_digest = _case_snapshot(cr.task)
        digests.append(case_digest)
        at = cr.first_trial_at
        trials = []
        for j, run in enumerate(cr.runs, start=1):
            trials.append(
                _trial(spec, cr, j, run, snapshot, case_digest, trial_exec, run_id, at, texture)
            )
            at += timedelta(milliseconds=run.latency_ms + 40.0)
        cases_json.append(_case_json(cr, "0.20", trials, case_digest))
    evidence = {
        "capture_id": run_id,
        "coverage": EVIDENCE_COVERAGE,
        "coverage_gaps": [],
        "events": [
            _event(
                run_id,
                "capture_started",
                "run",
                json.loads(canonical_json(run_exec)),
                {"run_id": run_id},
                spec.started - timedelta(milliseconds=5),
                texture,
            )
        ],
        "kind": "run",
        "requests_without_complete_response": [],
        "schema": "multivon.provider-evidence/v1",
        "state": "open",
    }
    report = {
        "schema": "multivon.report/v2",
        "evidence_issues": [],
        "provider_evidence": evidence,
        "execution": run_exec,
        "suite": spec.suite,
        "model": spec.bot,
        "suite_lock": _suite_lock(spec, digests),
        "summary": summary_block(results, "0.20"),
        "cases": cases_json,
    }
    return report, finished


# --- writing -----------------------------------------------------------------------------------


class SimulateError(Exception):
    """The arguments or the output directory cannot be used."""


def _check(
    suites: int, releases: int, cases: int, runs: int, p: float, seed: int, fmt: str
) -> None:
    for name, value in (
        ("suites", suites),
        ("releases", releases),
        ("cases", cases),
        ("runs", runs),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise SimulateError(f"--{name} must be a whole number of at least 1, got {value!r}")
    if not (isinstance(p, int | float) and 0.0 <= p <= 1.0):
        raise SimulateError(f"--p must be a probability in [0, 1], got {p!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MASK32:
        raise SimulateError(f"--seed must be a whole number in [0, 2**32), got {seed!r}")
    if fmt not in FORMATS:
        raise SimulateError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")


def _inside(root: Path, path: Path) -> Path:
    """`path`, after checking that nothing (a `..`, a symlink) takes it outside `root`."""
    resolved = path.resolve()
    if not resolved.is_relative_to(root):
        raise SimulateError(f"{path} resolves outside the output directory {root}; not writing it")
    return resolved


def _write(root: Path, path: Path, text: str, mtime: float) -> None:
    target = _inside(root, path)
    target.parent.mkdir(parents=True, exist_ok=True)
    _inside(root, target.parent)
    # write then rename, so a dashboard loading the directory never sees half a file
    partial = target.with_name(f".{target.name}.partial")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    mtime = min(mtime, time.time() - 10.0)
    os.utime(partial, (mtime, mtime))
    os.replace(partial, target)


def simulate_reports(
    out_dir: Path | str,
    suites: int = DEFAULTS["suites"],
    releases: int = DEFAULTS["releases"],
    cases: int = DEFAULTS["cases"],
    runs: int = DEFAULTS["runs"],
    p: float = DEFAULTS["p"],
    seed: int = DEFAULTS["seed"],
    fmt: str = DEFAULTS["format"],
    *,
    first_suite: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> list[Path]:
    """Write suites × releases report files under out_dir/<suite>/; return their paths.

    Each file is `<date>_<release>.json`, one release a week from FIRST_RUN, with its
    modification time set to the end of its simulated run (never later than now: a file
    from the future would look like one still being written). Existing files of the same
    name are replaced; nothing else in out_dir is touched. `first_suite` starts the suite
    numbering later, so that corpora written in several calls get distinct suites.
    """
    _check(suites, releases, cases, runs, p, seed, fmt)
    if isinstance(first_suite, bool) or not isinstance(first_suite, int) or first_suite < 0:
        raise SimulateError(f"first_suite must be a whole number >= 0, got {first_suite!r}")
    root = Path(out_dir)
    if root.exists() and not root.is_dir():
        raise SimulateError(f"{root} exists and is not a directory")
    root.mkdir(parents=True, exist_ok=True)
    root = root.resolve()
    written: list[Path] = []
    total = suites * releases
    for s in range(first_suite, first_suite + suites):
        name = suite_name(s)
        tasks = suite_tasks(name, cases, seed)
        table = reliabilities(tasks, releases, p, seed, name)
        for r in range(releases):
            label = release_label(r)
            started = FIRST_RUN + timedelta(days=7 * r, minutes=37 * s)
            spec = ReportSpec(name, s, label, r, name.split("-")[0] + "-bot", fmt, started)
            report, finished = build_report(spec, tasks, runs, table[r], seed)
            path = root / name / f"{started:%Y-%m-%d}_{label}.json"
            _write(root, path, json.dumps(report, indent=2), finished.timestamp())
            written.append(path)
            if progress:
                progress(len(written), total)
    return written


# --- command line ----------------------------------------------------------------------------


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    d = DEFAULTS
    parser.add_argument("--out", type=Path, required=True, help="directory to write reports into")
    parser.add_argument("--suites", type=int, default=d["suites"], help=f"default {d['suites']}")
    parser.add_argument(
        "--releases", type=int, default=d["releases"], help=f"default {d['releases']}"
    )
    parser.add_argument(
        "--cases", type=int, default=d["cases"], help=f"cases per suite (default {d['cases']})"
    )
    parser.add_argument(
        "--runs", type=int, default=d["runs"], help=f"runs per case (default {d['runs']})"
    )
    parser.add_argument(
        "--p",
        type=float,
        default=d["p"],
        help=f"pass probability in the first release (default {d['p']})",
    )
    parser.add_argument(
        "--seed", type=int, default=d["seed"], help=f"mulberry32 seed (default {d['seed']})"
    )
    parser.add_argument(
        "--format",
        dest="fmt",
        choices=FORMATS,
        default=d["format"],
        help=f"multivon-eval saved format (default {d['format']})",
    )


def register(subparsers: Any) -> None:
    """Add `relidash simulate` to the CLI's subcommands."""
    parser = subparsers.add_parser(
        "simulate",
        help="write simulated multivon-eval reports (benchmarks, demos)",
        description="Write report files in multivon-eval's saved formats from a seeded "
        "simulated agent (mulberry32: one draw per trial, in task order, pass when below p).",
    )
    _add_arguments(parser)
    parser.set_defaults(handler=run_simulate)


def run_simulate(args: argparse.Namespace) -> int:
    try:
        paths = simulate_reports(
            args.out, args.suites, args.releases, args.cases, args.runs, args.p, args.seed, args.fmt
        )
    except (SimulateError, OSError) as exc:
        print(f"relidash: {exc}", file=sys.stderr)
        return 2
    size = sum(path.stat().st_size for path in paths)
    print(
        f"relidash: wrote {len(paths)} report files ({args.suites} suites x {args.releases} "
        f"releases, {args.cases} cases x {args.runs} runs, format {args.fmt}, "
        f"{size / 1e6:.1f} MB) to {args.out}",
        file=sys.stderr,
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="relidash simulate")
    _add_arguments(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    return run_simulate(build_parser().parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
