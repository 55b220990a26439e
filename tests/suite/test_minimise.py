"""The last shrink pass: a counterexample keeps only the requests and seeded events its failure needs."""

from __future__ import annotations

from typing import Any

from sessionlog_spec.protocol.messages import Refused
from sessionlog_spec.protocol.model_driver import ModelDriver, state_result
from sessionlog_spec.suite.agreement import Mismatch, compare
from sessionlog_spec.suite.exchange import Exchange
from sessionlog_spec.suite.minimise import minimise
from sessionlog_spec.suite.oracle import Oracle
from sessionlog_spec.suite.ports.inprocess import InProcessPort


class LongLogStateDriver(ModelDriver):
    """Reports one event too many once the log holds three or more (a seed's end-of-seed marker included)."""

    def __init__(self) -> None:
        super().__init__()
        self.ops["state"] = self.op_state

    def op_state(self, request: dict[str, Any]) -> Any:
        result = state_result(self.state)
        if result["length"] >= 3:
            result["length"] += 1
        return result


def _event(seq: int, kind: str = "turn/start") -> dict[str, Any]:
    data = {"turn": 1} if kind == "turn/start" else {"turn": 1, "step": 1}
    return {"type": kind, "seq": seq, "time": seq, "data": data}


def _transcript(port: InProcessPort, requests: list[tuple[str, dict[str, Any]]]) -> list[Exchange]:
    oracle = InProcessPort(Oracle())
    exchanges = []
    for op, args in requests:
        expected, actual = oracle.call(op, **args), port.call(op, **args)
        exchanges.append(Exchange(op, args, expected, actual))
        if compare(op, expected, actual, strict_codes=False) is not None:
            break
    return exchanges


def test_unrelated_requests_and_seeded_events_are_dropped_and_the_failure_stays() -> None:
    port = InProcessPort(LongLogStateDriver())
    seed = [_event(0), _event(1, "step/start")]
    requests: list[tuple[str, dict[str, Any]]] = [
        ("reset", {}),
        ("state", {}),
        ("seed", {"events": seed[:1]}),
        ("state", {}),
        ("fold_surface", {"events": []}),
        ("reset", {}),
        ("seed", {"events": [*seed, {"type": "step/end", "seq": 2, "time": 2, "data": {"turn": 1, "step": 1}}]}),
        ("state", {}),
    ]
    transcript = _transcript(port, requests)
    assert len(transcript) == len(requests) and transcript[-1].op == "state"
    mismatch = compare("state", transcript[-1].expected, transcript[-1].actual, strict_codes=False)  # type: ignore[arg-type]
    assert mismatch is not None

    shorter, still = minimise(transcript, mismatch, port, strict_codes=False, header_observed=True, seconds=30)

    assert [e.op for e in shorter] == ["reset", "seed", "state"]
    assert still.kind == mismatch.kind
    assert shorter[1].args["events"] == seed, "the step/end goes; the bug needs two events and the marker"
    replayed = _transcript(port, [(e.op, e.args) for e in shorter])
    assert len(replayed) == 3 and not isinstance(replayed[-1].actual, Refused)
    assert compare("state", replayed[-1].expected, replayed[-1].actual, strict_codes=False) is not None  # type: ignore[arg-type]


def test_a_transcript_that_no_longer_fails_is_returned_unchanged() -> None:
    port = InProcessPort(ModelDriver())
    transcript = _transcript(port, [("reset", {}), ("seed", {"events": [_event(0)]}), ("state", {})])
    assert compare("state", transcript[-1].expected, transcript[-1].actual, strict_codes=False) is None  # type: ignore[arg-type]
    made_up = Mismatch("result", "made up")
    shorter, still = minimise(transcript, made_up, port, strict_codes=False, header_observed=True, seconds=5)
    assert shorter is transcript and still is made_up
