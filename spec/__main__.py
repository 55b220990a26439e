"""``python -m sessionlog_spec``: the command line."""

from sessionlog_spec.cli import main

raise SystemExit(main())
