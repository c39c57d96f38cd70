"""The diff's ▶ marker: on the first line that separates passing from failing trials, not
on the first line that differs (a greeting that varies in every trial differs between any
two transcripts, and separates nothing)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dashboard.analysis.diffing import (
    diff_lines,
    divergence_groups,
    first_divergence,
    separating_lines,
    separating_row,
)
from dashboard.render.diff import diff_html

SAMPLE = Path(__file__).resolve().parents[2] / "sample_reports"

GREETINGS = [
    "I can help with that. One moment.",
    "Thanks for reaching out - checking now.",
    "Let me look into that for you.",
    "Happy to help!",
    "On it.",
]


def transcript(greeting: str, answer: str, extra: str = "") -> str:
    lines = [
        "[user] Where is my refund?",
        f"[assistant] {greeting}",
        '[tool_call] orders.get(order_id="A-1")',
        '[tool_result] {"refund": "issued 2026-03-02"}',
        *([extra] if extra else []),
        f"[assistant] {answer}",
    ]
    return "\n".join(lines)


GOOD = "Your refund was issued on March 2."
BAD = "We have not received your return yet."
PASSING = [transcript(GREETINGS[i], GOOD) for i in range(3)]
FAILING = [transcript(GREETINGS[3], BAD), transcript(GREETINGS[4], BAD, "[tool_call] retry()")]


def marked_line(html: str) -> str:
    """The text of the row that carries the ▶ marker, tags removed."""
    row = next(r for r in html.split("<tr") if "▶" in r)
    return re.sub(r"<[^>]+>", "", row)


def test_a_greeting_that_varies_in_every_trial_is_not_the_divergence() -> None:
    rows = diff_lines(PASSING[0], FAILING[0])
    first = first_divergence(rows)
    assert first is not None and rows[first].left.endswith(GREETINGS[0])  # what differs first
    at = separating_row(rows, PASSING, FAILING)
    assert at is not None
    assert rows[at].left == f"[assistant] {GOOD}"
    assert rows[at].right == f"[assistant] {BAD}"
    shown = marked_line(diff_html(rows, "run 1 (passed)", "run 4 (failed_quality)", at))
    assert GOOD in shown and GREETINGS[0] not in shown


def test_a_line_every_failing_trial_has_and_no_passing_one_separates() -> None:
    failing = [transcript(GREETINGS[3], BAD, "[tool_call] retry()"), FAILING[1]]
    only_pass, only_fail = separating_lines(PASSING, failing)
    assert "[tool_call] retry()" in only_fail and f"[assistant] {BAD}" in only_fail
    assert only_pass == {f"[assistant] {GOOD}"}
    rows = diff_lines(PASSING[1], failing[0])
    at = separating_row(rows, PASSING, failing)
    assert at is not None and rows[at].right == "[tool_call] retry()"  # it comes first


def test_no_separating_line_leaves_the_first_divergence() -> None:
    # the failing trials say what a passing one says: no line tells the groups apart
    failing = [transcript(GREETINGS[3], GOOD), transcript(GREETINGS[4], GOOD)]
    rows = diff_lines(PASSING[0], failing[0])
    assert separating_row(rows, PASSING, failing) is None
    assert GREETINGS[0] in marked_line(diff_html(rows, "a", "b"))  # the first divergence


def test_a_lone_failing_trial_is_told_apart_by_the_passing_trials_lines() -> None:
    # its greeting is in "every" failing trial and no passing one, but one trial cannot
    # say which of its lines vary: the line every passing trial has and it lacks wins
    failing = [transcript("Good morning!", BAD)]
    rows = diff_lines(PASSING[2], failing[0])
    at = separating_row(rows, PASSING, failing)
    assert at is not None and rows[at].left == f"[assistant] {GOOD}"
    # with nothing from the passing side, the lone trial's own line is the answer
    same = [transcript("Good morning!", GOOD)]
    rows = diff_lines(PASSING[2], same[0])
    at = separating_row(rows, PASSING, same)
    assert at is not None and rows[at].right == "[assistant] Good morning!"


def test_volatile_tokens_do_not_make_a_line_separate() -> None:
    passing = ["start\n1 passed in 0.31s\nok", "start\n1 passed in 0.52s\nok"]
    failing = ["start\n1 passed in 0.77s\nboom"]
    rows = diff_lines(passing[0], failing[0])
    at = separating_row(rows, passing, failing)
    assert at is not None and rows[at].right == "boom"
    exact = separating_lines(passing, failing, ignore_volatile=False)
    assert "1 passed in 0.77s" in exact[1]  # the raw text differs in every trial


def test_support_agent_marker_is_past_the_greeting() -> None:
    """On the sample support-agent reports the first differing line is often the
    greeting; the marker lands on a line that every passing or every failing trial has."""
    checked = 0
    for path in sorted((SAMPLE / "support-agent").glob("*.json")):
        for case in json.loads(path.read_text())["cases"]:
            trials = case.get("trials") or []
            passing = [t["output"] or "" for t in trials if t["status"] == "passed"]
            failing = [t["output"] or "" for t in trials if t["status"] != "passed"]
            if not passing or not failing:
                continue
            rows = diff_lines(passing[0], failing[0])
            first = first_divergence(rows)
            at = separating_row(rows, passing, failing)
            if first is None or at is None:
                continue
            differing = rows[first].left
            if all(differing in p.splitlines() for p in passing):
                continue  # the first difference is a line every passing trial has
            # it varies among passing trials (the greeting): the marker is elsewhere
            only_pass, only_fail = separating_lines(passing, failing)
            assert at > first
            assert rows[at].left in only_pass or rows[at].right in only_fail
            assert differing not in marked_line(diff_html(rows, "p", "f", at))
            checked += 1
    assert checked >= 3, "the sample support-agent reports should hold greeting divergences"


def test_failing_trials_grouped_by_what_separates_them_not_by_greeting() -> None:
    failing = {
        4: transcript(GREETINGS[3], BAD),
        5: transcript(GREETINGS[4], BAD),
        6: transcript("Good morning!", "I cannot look that up right now."),
    }
    by_first = divergence_groups(PASSING[0], failing)
    assert {g.line for g in by_first} == {2}  # every trial differs first at its greeting
    assert len(by_first) == 3
    groups = divergence_groups(PASSING[0], failing, all_passing=PASSING)
    assert [(g.line, g.text, g.trials) for g in groups] == [
        (5, f"[assistant] {BAD}", (4, 5)),
        (5, "[assistant] I cannot look that up right now.", (6,)),
    ]
