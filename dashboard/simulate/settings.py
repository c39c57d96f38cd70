"""The simulator's defaults and fixed facts, shared by its modules and the CLI."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

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
FIRST_RUN = datetime(2025, 1, 6, 9, 0, tzinfo=UTC)
MASK32 = 0xFFFFFFFF
