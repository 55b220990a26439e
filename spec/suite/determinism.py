"""A port must answer the same requests the same way: the memory of its answers that shows when it does not.

Every example starts from ``reset``, so the requests an example has sent so far fix what the port
holds, and its answer to the next request is a function of them.  Hypothesis relies on that: it
replays an example to shrink it and to confirm a failure.  A port whose answer depends on more
(state that survives ``reset``, the clock, randomness, a counter) makes a replay take another path,
which Hypothesis can only report as a flaky or inconsistent test.  :class:`AnswerMemory` keeps, per
group, a digest of the port's answer to every request sequence it has seen, and names the first
request answered two ways.

Only what the suite judges is remembered: a refusal's code (its message is free text, and a
restarted driver may word it differently) and an accepted request's result.  Port faults are not
remembered: a timeout on a loaded machine is not an answer.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from sessionlog_spec.protocol import jsonlines
from sessionlog_spec.protocol.messages import Ok, Refused, Reply

MAX_REMEMBERED = 1_000_000
"""Request sequences remembered per group (about 100 bytes each); later ones are still checked against them."""
RECENT_ANSWERS = 256
"""Whole answers kept for the most recent request sequences, to show both sides of a conflict."""
QUOTE_LIMIT = 600


@dataclass(frozen=True, slots=True)
class Nondeterminism:
    """A request the port answered two ways after the same requests since ``reset``."""

    request_number: int
    """Which request of its example (1 is the first)."""
    op: str
    args: dict[str, Any]
    first: str | None
    """The earlier answer, when it is still remembered whole."""
    second: str

    def describe(self) -> str:
        """What a driver's author needs to hear."""
        earlier = self.first if self.first is not None else "another answer (no longer remembered whole)"
        return (
            f"the driver answered the same request differently: request {self.request_number} of an example, "
            f"{_quoted({'op': self.op, **self.args})}, was answered {earlier} and later {self.second}, after the "
            "same requests since `reset`; does state leak across `reset`, or does an answer depend on the clock, "
            "randomness or a counter?"
        )


class RequestChain:
    """The requests one example has sent so far, as a running digest."""

    def __init__(self) -> None:
        self._digest = hashlib.blake2b(digest_size=16)
        self.count = 0

    def add(self, op: str, args: dict[str, Any]) -> bytes | None:
        """Take one more request; the key of the sequence so far, or ``None`` for a request with no JSON form."""
        self.count += 1
        try:
            self._digest.update(jsonlines.dumps({"op": op, **args}))
        except (TypeError, ValueError):
            self._digest.update(f"#{self.count}:{op}".encode())
            return None
        return self._digest.copy().digest()


class AnswerMemory:
    """Per group: the port's answer to every request sequence, and the first conflict found."""

    def __init__(self, limit: int = MAX_REMEMBERED) -> None:
        self._answers: dict[bytes, bytes] = {}
        self._recent: OrderedDict[bytes, str] = OrderedDict()
        self._limit = limit
        self.conflict: Nondeterminism | None = None

    def observe(self, chain: RequestChain, op: str, args: dict[str, Any], answer: Reply) -> Nondeterminism | None:
        """Record the port's ``answer`` to ``op`` after the chain's requests; the conflict it shows, if any."""
        key = chain.add(op, args)
        if key is None:
            return None
        shown = _judged_form(answer)
        digest = hashlib.blake2b(shown.encode(), digest_size=16).digest()
        before = self._answers.get(key)
        if before is None:
            if len(self._answers) < self._limit:
                self._answers[key] = digest
                self._remember(key, shown)
            return None
        if before == digest:
            return None
        found = Nondeterminism(chain.count, op, args, self._recent.get(key), _quote(shown))
        if self.conflict is None:
            self.conflict = found
        return found

    def _remember(self, key: bytes, shown: str) -> None:
        self._recent[key] = _quote(shown)
        if len(self._recent) > RECENT_ANSWERS:
            self._recent.popitem(last=False)


def _judged_form(answer: Reply) -> str:
    if isinstance(answer, Refused):
        return f"a refusal with code {answer.code}"
    assert isinstance(answer, Ok)
    try:
        return "the result " + jsonlines.dumps(answer.result).decode("utf-8").rstrip("\n")
    except (TypeError, ValueError):
        return f"the result {answer.result!r}"


def _quote(text: str) -> str:
    return text if len(text) <= QUOTE_LIMIT else text[:QUOTE_LIMIT] + f" … ({len(text) - QUOTE_LIMIT} more characters)"


def _quoted(request: dict[str, Any]) -> str:
    try:
        return _quote(jsonlines.dumps(request).decode("utf-8").rstrip("\n"))
    except (TypeError, ValueError):
        return _quote(repr(request))
