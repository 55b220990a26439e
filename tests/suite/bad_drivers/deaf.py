"""A driver that stops reading stdin after ``hello``, so a large request fills the pipe.

With the argument ``babble`` it also writes 2 MiB to stdout without ever finishing a line.
"""

import json
import sys
import time

from _driverlib import HELLO, reply, say, write

request = json.loads(sys.stdin.buffer.readline())
reply(request["id"], HELLO)
say("deaf: no longer reading")
if sys.argv[1:] == ["babble"]:
    write(b"x" * (2 << 20))
time.sleep(3600)
