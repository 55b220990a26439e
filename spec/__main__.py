"""``python -m spec``: the command line."""

from spec.cli import main

raise SystemExit(main())
