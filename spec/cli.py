"""The ``python -m spec`` command line."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from spec import catalogue


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand and return its exit status."""
    parser = argparse.ArgumentParser(prog="python -m spec", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    cat = sub.add_parser("catalogue", help="regenerate invariants.md from the registry, contracts and tests")
    cat.add_argument("--output", type=Path, default=catalogue.ROOT / "invariants.md")
    cat.add_argument("--check", action="store_true", help="fail if the file is stale instead of writing it")
    args = parser.parse_args(argv)
    if args.command == "catalogue":
        text = catalogue.render_current()
        if args.check:
            current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
            if current != text:
                print(f"{args.output} is stale: run python -m spec catalogue", file=sys.stderr)
                return 1
            return 0
        args.output.write_text(text, encoding="utf-8")
        print(f"wrote {args.output}")
    return 0
