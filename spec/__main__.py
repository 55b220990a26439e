"""``python -m sessionlog_spec``: the command line."""

from sessionlog_spec.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
