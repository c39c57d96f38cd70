"""`python -m dashboard.cli`: the `relidash` command."""

from dashboard.cli.entry import run

raise SystemExit(run())
