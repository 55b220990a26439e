"""A last shrink pass over a counterexample: drop every request and seeded event the failure does not need.

Hypothesis shrinks the choices a machine made, not the requests they became: a failing example
often keeps state reads, earlier steps and seeded events that have nothing to do with the failure.
:func:`minimise` replays the transcript against the port and a fresh model, and keeps removing
requests (then events of ``seed`` requests) while the same kind of disagreement still happens on
the same op.  The result is a counterexample that still fails, never a longer one; the pass stops
when its time budget is spent.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from sessionlog_spec.protocol.messages import Port, PortFault, Reply
from sessionlog_spec.suite.agreement import Mismatch, compare
from sessionlog_spec.suite.exchange import Exchange
from sessionlog_spec.suite.oracle import Oracle
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.storage_actions import DONE, SUITE_ACTIONS, DurabilityJudge, fresh_directories, judge_replayed, perform

Request = tuple[str, dict[str, Any]]
LIST_ARGUMENTS = ("events",)
"""Request arguments whose items may be dropped one by one (a ``seed``'s events)."""


class _Replayer:
    """Replays request lists against the port and a fresh model, restarting the port after a fault."""

    def __init__(self, port: Port, op: str, kind: str, strict_codes: bool, header_observed: bool) -> None:
        self.port, self.op, self.kind = port, op, kind
        self.strict_codes, self.header_observed = strict_codes, header_observed
        self.dead = False

    def failing(self, requests: list[Request]) -> tuple[list[Exchange], Mismatch] | None:
        """The exchanges up to the first disagreement, when it is the same kind on the same op."""
        if self.dead and not self.restart():
            return None
        with fresh_directories(requests) as moved:
            try:
                return self._replayed(requests, moved)
            except OSError:  # a shorter list may lack the store a later request names: not the same failure
                return None

    def _replayed(self, requests: list[Request], moved: list[Request]) -> tuple[list[Exchange], Mismatch] | None:
        # ``moved`` is what is sent (store directories made fresh); the transcript keeps ``requests``.
        driver = Oracle()
        oracle = InProcessPort(driver)
        judge = DurabilityJudge()
        exchanges: list[Exchange] = []
        for (op, args), (_, sent) in zip(requests, moved, strict=True):
            expected: Reply = DONE
            actual: Reply = DONE
            try:
                if op in SUITE_ACTIONS:
                    perform(self.port, op, sent, driver)
                else:
                    expected = oracle.call(op, **sent)
                    actual = self.port.call(op, **sent)
            except PortFault as fault:
                self.dead = True
                exchanges.append(Exchange(op, args, expected, fault))
                mismatch = Mismatch("port-fault", str(fault))
                return (exchanges, mismatch) if (op, mismatch.kind) == (self.op, self.kind) else None
            exchanges.append(Exchange(op, args, expected, actual))
            found = compare(op, expected, actual, self.strict_codes, self.header_observed)
            if found is None and (wrong := judge_replayed(judge, op, sent, actual, driver)) is not None:
                found = Mismatch("wrong-result", wrong)
            if found is not None:
                return (exchanges, found) if (op, found.kind) == (self.op, self.kind) else None
        return None

    def restart(self) -> bool:
        restart: Callable[[], None] | None = getattr(self.port, "restart", None)
        if restart is None:
            return False
        try:
            restart()
        except PortFault:
            return False
        self.dead = False
        return True


def minimise(
    transcript: list[Exchange],
    mismatch: Mismatch,
    port: Port,
    *,
    strict_codes: bool,
    header_observed: bool,
    seconds: float,
) -> tuple[list[Exchange], Mismatch]:
    """The shortest failing transcript found within ``seconds`` (``transcript`` itself if none is shorter).

    The first request is kept when it is ``reset`` (it makes the replay independent of what ran
    before); the port is left running.
    """
    if not transcript:
        return transcript, mismatch
    deadline = time.monotonic() + seconds
    replayer = _Replayer(port, transcript[-1].op, mismatch.kind, strict_codes, header_observed)
    best: tuple[list[Exchange], Mismatch] = (transcript, mismatch)
    fixed = 1 if transcript[0].op == "reset" else 0

    def attempt(requests: list[Request]) -> bool:
        nonlocal best
        if time.monotonic() > deadline:
            return False
        found = replayer.failing(requests)
        if found is None or len(found[0]) > len(best[0]):
            return False
        best = found
        return True

    try:
        _drop_requests(fixed, attempt, lambda: best)
        _drop_list_items(fixed, attempt, lambda: best)
    finally:
        if replayer.dead:
            replayer.restart()
    return best


def _requests(exchanges: list[Exchange]) -> list[Request]:
    return [(e.op, e.args) for e in exchanges]


def _drop_requests(
    fixed: int, attempt: Callable[[list[Request]], bool], current: Callable[[], tuple[list[Exchange], Mismatch]]
) -> None:
    """Remove chunks of requests, halving the chunk size, while the failure stays (the last request always stays)."""
    size = max(1, (len(current()[0]) - fixed - 1) // 2)
    while size >= 1:
        index = fixed
        while True:
            requests = _requests(current()[0])
            if index >= len(requests) - 1:
                break
            trial = requests[:index] + requests[min(index + size, len(requests) - 1) :]
            if not attempt(trial):
                index += size
        size //= 2


def _drop_list_items(
    fixed: int, attempt: Callable[[list[Request]], bool], current: Callable[[], tuple[list[Exchange], Mismatch]]
) -> None:
    """Remove items of list arguments (a ``seed``'s events), chunks first, while the failure stays."""
    position = 0
    while True:
        requests = _requests(current()[0])
        if position >= len(requests):
            return
        op, args = requests[position]
        for name in LIST_ARGUMENTS:
            items = args.get(name)
            if not isinstance(items, list) or position < fixed:
                continue
            size = max(1, len(items) // 2)
            while size >= 1:
                index = 0
                while True:
                    now = _requests(current()[0])
                    if position >= len(now) or not isinstance(items := now[position][1].get(name), list):
                        return
                    if index >= len(items):
                        break
                    shorter = {**args, name: items[:index] + items[index + size :]}
                    trial = _requests(current()[0])
                    trial[position] = (op, shorter)
                    if attempt(trial):
                        args = shorter
                    else:
                        index += size
                size //= 2
        position += 1
