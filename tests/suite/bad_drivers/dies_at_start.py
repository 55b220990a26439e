"""A driver that dies while starting up, saying why on stderr.

``import``: a module it needs is missing; ``before``: it exits with status 1 before reading ``hello``;
``after``: it answers ``hello``, then exits with status 1.
"""

import json
import sys

from _driverlib import HELLO, record_pid, reply, say

record_pid()
mode = sys.argv[1] if len(sys.argv) > 1 else "before"
if mode == "import":
    import sessionlog_driver_dependency_that_is_not_installed  # type: ignore[import-not-found]  # noqa: F401
if mode == "before":
    say("dies_at_start: the configuration file is missing")
    sys.exit(1)
request = json.loads(sys.stdin.buffer.readline())
reply(request["id"], HELLO)
say("dies_at_start: lost the database right after hello")
sys.exit(1)
