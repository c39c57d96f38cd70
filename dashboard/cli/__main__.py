"""`python -m dashboard.cli`: the `relidash` command."""

from dashboard.cli.main import main

raise SystemExit(main())
