"""A driver that stops reading stdin after ``hello``, so a large request fills the pipe."""

import json
import sys
import time

from _driverlib import HELLO, reply, say

request = json.loads(sys.stdin.buffer.readline())
reply(request["id"], HELLO)
say("deaf: no longer reading")
time.sleep(3600)
