"""The messages the agent loop writes: drawn along their shapes now and then, so every optional
member a harness may write turns up valid (every user source kind, token usage with its optional
counts, replay state, the ``interrupted`` flag), and a message cut off by the user is followed by
what a harness does next."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, cast

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.strategies import DrawFn
from model_cases import BUILDER_STATES

from sessionlog_spec.model.payloads import CURRENT_GENERATION, payload_shape
from sessionlog_spec.model.session import append_event
from sessionlog_spec.model.violation import Violation
from sessionlog_spec.suite.agent.actions import applicable_actions, assistant_data, build_action, shaped_message
from sessionlog_spec.suite.agent.builder import RawEvent, SessionBuilder
from sessionlog_spec.suite.agent.payload_values import union_arms
from sessionlog_spec.suite.spread import keyed_draw

DRAWS = 300


def _built(state: str, action: str, shaped: bool = False, draws: int = DRAWS) -> list[RawEvent]:
    """``draws`` events the loop builds for ``action`` on a fresh copy of ``state`` (``shaped``: each
    one then drawn along its shape, where the model takes what was drawn)."""
    events: list[RawEvent] = []

    @settings(max_examples=draws, database=None, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def build(data: st.DataObject) -> None:
        builder = BUILDER_STATES[state]()
        event = build_action(cast(DrawFn, data.draw), builder, action)
        if shaped:
            event = shaped_message(keyed_draw(cast(DrawFn, data.draw), builder.fingerprint), builder, event) or event
        assert not isinstance(append_event(builder.state, event), Violation), event
        events.append(event)

    build()
    return events


def _assistant_data(state: str) -> list[dict[str, Any]]:
    """``DRAWS`` payloads of the loop's own assistant messages (none drawn along the shape)."""
    drawn: list[dict[str, Any]] = []

    @settings(max_examples=DRAWS, database=None, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.data())
    def draw(data: st.DataObject) -> None:
        drawn.append(assistant_data(cast(DrawFn, data.draw), BUILDER_STATES[state]()))

    draw()
    return drawn


def _seen(events: list[RawEvent], where: Callable[[dict[str, object]], object]) -> Counter[object]:
    return Counter(where(e["data"]) for e in events)


def test_inv_pay_1_the_loop_writes_a_user_message_of_every_source_kind() -> None:
    source = payload_shape("user/message", CURRENT_GENERATION)
    kinds = {
        key
        for variants, key in union_arms(source)
        if variants.discriminant == "kind" and isinstance(key, str)
    }
    assert {"user", "plugin", "goal", "session-reference", "webhook"} <= kinds
    shaped = _seen(_built("realistic", "user_message", shaped=True, draws=2 * DRAWS), lambda d: d["source"]["kind"])  # type: ignore[index]
    assert kinds <= set(shaped), sorted(kinds - set(shaped))
    # In the loop, the user still writes most of them.
    assert _seen(_built("realistic", "user_message"), lambda d: d["source"]["kind"])["user"] > DRAWS // 2  # type: ignore[index]


def test_inv_pay_1_the_loop_writes_assistant_messages_with_every_optional_member() -> None:
    shaped = _built("after_compaction", "assistant_message", shaped=True)
    usage = Counter(member for e in shaped for member in e["data"].get("usage", {}))
    assert {"totalTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"} <= set(usage), usage
    assert any("replayState" in e["data"]["message"]["source"] for e in shaped)
    # Cut off after asking for a call, too: the step then runs it before it ends.
    assert any(
        e["data"].get("interrupted") is True and any(b.get("type") == "tool-call" for b in e["data"]["message"]["content"])
        for e in shaped
    )
    # The loop's own messages are cut off too, those that ask for nothing (how often is a matter of
    # the kill rates, which ask whether what follows one is tried in every run).
    final = [d for d in _assistant_data("after_compaction") if not any(b["type"] == "tool-call" for b in d["message"]["content"])]
    assert 0 < sum(d.get("interrupted") is True for d in final) < len(final)


def test_inv_pay_1_the_loop_writes_tool_results_with_drawn_content_for_the_call_it_answers() -> None:
    events = _built("open_step_with_pending", "tool_result")
    answered = _seen(events, lambda d: d["message"]["source"]["callId"])  # type: ignore[index]
    assert set(answered) == {"d"}
    blocks = Counter(b["type"] for e in events for b in e["data"]["message"]["content"][0]["content"])
    assert set(blocks) - {"text"}, blocks


def test_inv_trace_10_a_harness_stops_the_step_its_model_output_was_cut_off_in() -> None:
    def weight(builder: SessionBuilder) -> float:
        actions = applicable_actions(builder)
        return actions.count("step_end") / len(actions)

    plain, cut = BUILDER_STATES["between_steps"](), BUILDER_STATES["between_steps"]()
    for builder, interrupted in ((plain, False), (cut, True)):
        builder.step_start()
        raw = builder.assistant_message("Stopped here.", commit=False)
        if interrupted:
            raw["data"]["interrupted"] = True
        builder.commit(raw)
    # Still an open step a message may follow (the flag closes nothing), but mostly closed next.
    assert "assistant_message" in applicable_actions(cut)
    assert weight(cut) > 2 * weight(plain)
