"""The payload vocabulary: the exact shape of the ``data`` of each of the 51 event types.

The table is the released v0/v1 payload rules (``@deepseek-ai/dsh-session-format-v0-to-v1``, its
frozen dispositions and nested payload semantics), restated in the shape language of
:mod:`sessionlog_spec.model.shapes`.  Every type's payload is an object with exactly its members
(INV-PAY-1); nested values have the shapes and leaf types below (INV-PAY-2); merge-extensible unions
accept unknown variants as owner-opaque JSON and opaque members are lossless JSON left
uninspected (INV-PAY-3).

**Payload generations.**  Generation 1 (v1, current) is :data:`EVENT_PAYLOADS`.  Generation 0 (the
v0 source a migration reads) differs in three places:

* ``session-log-deepseek/delivery-accepted``: v1 admits ``sessionFormatVersion`` (a count, 0 when
  absent); only an acceptance of format 1 is checked further, one of another format is kept as it
  is.  v0 admits no such member and always checks ``sessionId`` and ``throughSeq``.
* ``subagent/descriptor``: v1 keeps a descriptor of a version other than 3 as owner-opaque JSON
  (its ``version`` must still be a count); v0 refuses it.
* session-reference message sources: v1 admits ``capturedFormatVersion`` (1 through the
  generation), v0 does not.

**Context.**  Members that name earlier events (``throughSeq``, ``sourceEventSeq``, the seq lists
of compaction and titles) must be lower than the event's own ``seq``: pass it to
:func:`payload_problem`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from sessionlog_spec.model.event import KNOWN_EVENT_TYPES
from sessionlog_spec.model.json_value import JsonValue, RawJson
from sessionlog_spec.model.shapes import (
    ABSENT,
    COUNT,
    POSITIVE,
    SAFE_INT,
    Array,
    Bool,
    Context,
    EarlierSeq,
    Equal,
    Finite,
    FlagIfAnyPositive,
    GoalStateRestatement,
    Integer,
    ItemIndex,
    Literal,
    Members,
    MembersWithin,
    Named,
    NotAbove,
    Nullable,
    Opaque,
    Record,
    Related,
    Shape,
    Str,
    StrForm,
    SumOf,
    UniqueMember,
    Variants,
    members_of,
    merge_extensible,
    reaches_opaque,
    shape_problem,
)

CURRENT_GENERATION = 1
GENERATIONS = (0, 1)

# -- leaves ------------------------------------------------------------------------------------

TEXT = Str()
NON_EMPTY = Str(non_empty=True)
OPAQUE = Opaque()
BOOL = Bool()
TRUE = Literal(True)
"""A flag that is present only when set."""
EARLIER_SEQ = EarlierSeq()
SCHEDULE_ID = Str(non_empty=True, form=StrForm.TRIMMED)
INSTANT = Str(form=StrForm.INSTANT)
OPAQUE_OBJECT = Record(additional=OPAQUE)
"""Any JSON object, its members uninspected."""


def seqs(non_empty: bool = False) -> Array:
    """A list of distinct earlier seqs."""
    return Array(EARLIER_SEQ, min_items=1 if non_empty else 0, unique=True)


def exactly_one(items: Shape) -> Array:
    """An array of exactly one item."""
    return Array(items, min_items=1, max_items=1)


# -- shared records ----------------------------------------------------------------------------

TOKEN_USAGE = Named(
    "tokenUsage",
    "Token counts of one model call.",
    lambda: Record(
        required={"inputTokens": COUNT, "outputTokens": COUNT},
        optional={"totalTokens": COUNT, "cacheReadTokens": COUNT, "cacheWriteTokens": COUNT, "reasoningTokens": COUNT},
    ),
)

LLM_FAILURE = Named(
    "llmFailure",
    "A failed model call: what the provider said, and when it asked to be retried.",
    lambda: Record(
        required={"message": NON_EMPTY, "code": NON_EMPTY},
        optional={
            "status": Integer(100, 599),
            "providerRetryAfterMs": Finite(minimum=0, exclusive_minimum=True),
            "requestId": NON_EMPTY,
        },
    ),
)

MODEL_ROUTE = Named(
    "modelRoute", "A provider and one of its models.", lambda: Record(required={"provider": NON_EMPTY, "model": NON_EMPTY})
)

# -- content blocks ----------------------------------------------------------------------------

IMAGE_ATTACHMENT = Named(
    "imageAttachment",
    "An attached image, by reference.",
    lambda: Record(
        required={
            "attachmentId": NON_EMPTY,
            "mediaType": Literal("image/png", "image/jpeg", "image/webp", "image/gif"),
            "bytes": COUNT,
            "width": POSITIVE,
            "height": POSITIVE,
        },
        optional={"name": TEXT, "originalDimensions": Record(required={"width": POSITIVE, "height": POSITIVE})},
    ),
)

TOOL_CALL_BLOCK = Named(
    "toolCallBlock",
    "A tool call the model asked for; the arguments are the raw string the model wrote.",
    lambda: Record(required={"type": Literal("tool-call"), "id": NON_EMPTY, "name": NON_EMPTY, "arguments": TEXT}),
)

TOOL_RESULT_BLOCK = Named(
    "toolResultBlock",
    "The answer to one tool call.",
    lambda: Record(
        required={"type": Literal("tool-result"), "toolCallId": NON_EMPTY, "content": CONTENT_BLOCKS},
        optional={"isError": BOOL},
    ),
)

_TEXT_BLOCK = Record(required={"type": Literal("text"), "text": TEXT})
_REASONING_BLOCK = Record(required={"type": Literal("reasoning"), "text": TEXT})

CONTENT_BLOCK = Named(
    "contentBlock",
    "One block of message content; a block of an unknown type is kept as owner-opaque JSON.",
    lambda: merge_extensible(
        "type",
        {
            "text": _TEXT_BLOCK,
            "reasoning": _REASONING_BLOCK,
            "image": Record(required={"type": Literal("image"), "attachment": IMAGE_ATTACHMENT}),
            "tool-call": TOOL_CALL_BLOCK,
            "tool-result": TOOL_RESULT_BLOCK,
        },
    ),
)

CONTENT_BLOCKS: Array = Array(CONTENT_BLOCK)

# -- message sources ---------------------------------------------------------------------------

MODEL_SOURCE = Named(
    "modelSource",
    "The model that wrote an assistant message.",
    lambda: Record(
        required={"kind": Literal("model"), "provider": NON_EMPTY, "model": NON_EMPTY}, optional={"replayState": OPAQUE}
    ),
)

TOOL_SOURCE = Named(
    "toolSource", "The tool call a tool result answers.", lambda: Record(required={"kind": Literal("tool"), "callId": NON_EMPTY})
)

_GOAL_SOURCE = Record(required={"kind": Literal("goal"), "goalId": NON_EMPTY, "revision": POSITIVE, "round": POSITIVE})


def _plugin_forms(compact: bool) -> Variants:
    """A plugin source's arms by ``form``: sections only with ``snapshot``, a summary only with
    ``notice``; without a form, ``sections`` and ``summary`` are admitted and left uninspected."""
    base: dict[str, Shape] = {"kind": Literal("plugin"), "plugin": Literal("compact") if compact else NON_EMPTY}
    if compact:
        base["compactionId"] = NON_EMPTY
    extra: dict[str, Shape] = {"sourceCommandId": NON_EMPTY} if compact else {}
    sections = Array(Record(required={"name": NON_EMPTY, "text": TEXT}))

    def form(name: str, **members: Shape) -> Record:
        return Record(required={**base, "form": Literal(name), **members}, optional=extra)

    return Variants(
        "form",
        (
            (ABSENT, Record(required=base, optional={**extra, "sections": OPAQUE, "summary": OPAQUE})),
            ("instructions", form("instructions")),
            ("catalog", form("catalog")),
            ("snapshot", form("snapshot", sections=sections)),
            ("notice", form("notice", summary=TEXT)),
            ("relay", form("relay")),
            ("recall", form("recall")),
        ),
    )


PLUGIN_SOURCE = Named(
    "pluginSource",
    "Text a plugin contributed; the compaction plugin names its compaction.  A form-less plugin "
    "source keeps any sections and summary as opaque JSON.",
    lambda: Variants("plugin", (("compact", _plugin_forms(compact=True)),), otherwise=_plugin_forms(compact=False)),
)

_RELAY_SOURCE = Record(
    required={"kind": Literal("coordinator", "subagent-report"), "form": Literal("relay"), "senderSessionId": NON_EMPTY}
)

_SOURCE_ARMS: dict[str, Shape] = {
    "user": Record(required={"kind": Literal("user")}, optional={"rpcId": NON_EMPTY, "clientTimeZone": NON_EMPTY}),
    "plugin": PLUGIN_SOURCE,
    "model": MODEL_SOURCE,
    "tool": TOOL_SOURCE,
    "agent-instructions": Record(
        required={
            "kind": Literal("agent-instructions"),
            "form": Literal("instructions"),
            "changes": Array(
                Record(
                    required={"action": Literal("set", "replace", "remove"), "scope": TEXT, "path": TEXT},
                    optional={"digest": TEXT},
                )
            ),
        },
        optional={"baseline": TRUE, "baselineIdentity": NON_EMPTY},
    ),
    "team-message": Record(
        required={
            "kind": Literal("team-message"),
            "teamId": NON_EMPTY,
            "messageId": NON_EMPTY,
            "senderId": NON_EMPTY,
            "senderName": TEXT,
        }
    ),
    "skill-invocation": Record(
        required={"kind": Literal("skill-invocation"), "name": NON_EMPTY, "form": Literal("instructions")}
    ),
    "skill-catalog": Record(
        required={
            "kind": Literal("skill-catalog"),
            "form": Literal("catalog"),
            "entries": Array(Record(required={"name": NON_EMPTY, "description": TEXT})),
        },
        optional={"update": TRUE},
    ),
    "coordinator": _RELAY_SOURCE,
    "subagent-report": _RELAY_SOURCE,
    "subagent-settled": Record(
        required={"kind": Literal("subagent-settled"), "form": Literal("notice"), "summary": TEXT, "senderSessionId": NON_EMPTY}
    ),
    "webhook": Record(
        required={
            "kind": Literal("webhook"),
            "provider": NON_EMPTY,
            "source": NON_EMPTY,
            "deliveryId": NON_EMPTY,
            "ruleId": NON_EMPTY,
            "form": Literal("notice"),
            "summary": TEXT,
        }
    ),
}


def _session_reference_source(generation: int) -> Record:
    """Recalled sessions: one reference per input, in input order, with consistent message accounting."""
    captured: dict[str, Shape] = {"capturedFormatVersion": Integer(1, generation)} if generation >= 1 else {}
    reference = Related(
        Record(
            required={
                "sessionId": NON_EMPTY,
                "label": TEXT,
                "capturedThroughSeq": Nullable(COUNT),
                "compacted": BOOL,
                "originalMessages": COUNT,
                "retainedMessages": COUNT,
                "omittedMessages": COUNT,
                "omittedBytes": COUNT,
                "truncated": BOOL,
                "inputIndex": COUNT,
            },
            optional=captured,
        ),
        (
            SumOf(("originalMessages",), (("retainedMessages",), ("omittedMessages",))),
            FlagIfAnyPositive(("truncated",), (("omittedMessages",), ("omittedBytes",))),
        ),
    )
    return Record(
        required={
            "kind": Literal("session-reference"),
            "form": Literal("recall"),
            "version": Literal(1),
            "references": Related(Array(reference, min_items=1), (ItemIndex("inputIndex"), UniqueMember("sessionId"))),
        }
    )


class _Generation:
    """The shapes that depend on the payload generation: message sources (a session reference's
    ``capturedFormatVersion``) and the messages that carry them."""

    def __init__(self, generation: int) -> None:
        self.generation = generation
        session_reference = _session_reference_source(generation)
        self.message_source = Named(
            "messageSource",
            "Where a message came from; a source of an unknown kind is kept as owner-opaque JSON.",
            lambda: merge_extensible("kind", {**_SOURCE_ARMS, "goal": _GOAL_SOURCE, "session-reference": session_reference}),
        )
        legacy_goal = Record(
            required={
                "kind": Literal("goal"),
                "goalId": NON_EMPTY,
                "revision": POSITIVE,
                "round": Literal(0),
                "change": GOAL_CHANGE,
            }
        )
        self.user_message_source = Named(
            "userMessageSource",
            "Where a user-role message came from.  A goal source that carries its goal change is the "
            "legacy form, whose message restates the change.",
            lambda: merge_extensible(
                "kind",
                {
                    **_SOURCE_ARMS,
                    "goal": Variants("change", ((ABSENT, _GOAL_SOURCE),), otherwise=legacy_goal),
                    "session-reference": session_reference,
                },
            ),
        )
        self.user_message = Named(
            "userMessage",
            "A message in the user role: what the user (or a plugin, a goal, a teammate, …) said.",
            lambda: Related(
                Record(
                    required={
                        "id": NON_EMPTY,
                        "role": Literal("user"),
                        "content": CONTENT_BLOCKS,
                        "source": self.user_message_source,
                    }
                ),
                (GoalStateRestatement(),),
            ),
        )
        self.any_message = Named(
            "message",
            "A message of any role.",
            lambda: Record(
                required={
                    "id": NON_EMPTY,
                    "role": Literal("system", "user", "assistant"),
                    "content": CONTENT_BLOCKS,
                    "source": self.message_source,
                }
            ),
        )


ASSISTANT_MESSAGE = Named(
    "assistantMessage",
    "A message the model wrote.",
    lambda: Record(required={"id": NON_EMPTY, "role": Literal("assistant"), "content": CONTENT_BLOCKS, "source": MODEL_SOURCE}),
)

TOOL_MESSAGE = Named(
    "toolMessage",
    "A tool's answer, as a user-role message of exactly one tool-result block answering its source's call.",
    lambda: Related(
        Record(
            required={"id": NON_EMPTY, "role": Literal("user"), "content": exactly_one(TOOL_RESULT_BLOCK), "source": TOOL_SOURCE}
        ),
        (Equal(("content", 0, "toolCallId"), ("source", "callId")),),
    ),
)

# -- model streaming ---------------------------------------------------------------------------

_FAILED_FINISH = Record(required={"kind": Literal("aborted", "error"), "failure": LLM_FAILURE})
_PLAIN_FINISH = Record(required={"kind": Literal("stop", "tool-calls", "max-tokens")})

FINISH_REASON = Named(
    "finishReason",
    "Why a model stream ended; a reason of an unknown kind is kept as owner-opaque JSON.",
    lambda: merge_extensible(
        "kind",
        {
            "aborted": _FAILED_FINISH,
            "error": _FAILED_FINISH,
            "stop": _PLAIN_FINISH,
            "tool-calls": _PLAIN_FINISH,
            "max-tokens": _PLAIN_FINISH,
        },
    ),
)

REPLAY_ENVELOPE = Named(
    "replayEnvelope",
    "Provider state kept for replaying a response.",
    lambda: Record(required={"response": OPAQUE}, optional={"blocks": Array(OPAQUE)}),
)


def _chunk(kind: str | tuple[str, ...], optional: Mapping[str, Shape] | None = None, **members: Shape) -> Record:
    kinds = (kind,) if isinstance(kind, str) else kind
    return Record(required={"type": Literal(*kinds), **members}, optional=optional or {})


_DELTA_CHUNK = _chunk(("text-delta", "reasoning-delta"), index=COUNT, text=TEXT)

STREAM_CHUNK = Named(
    "streamChunk",
    "One piece of a streamed model response.",
    lambda: Variants(
        "type",
        (
            ("block-start", _chunk("block-start", index=COUNT, blockType=NON_EMPTY)),
            ("text-delta", _DELTA_CHUNK),
            ("reasoning-delta", _DELTA_CHUNK),
            ("tool-call-delta", _chunk("tool-call-delta", {"name": TEXT}, index=COUNT, id=NON_EMPTY, argumentsDelta=TEXT)),
            ("block-end", _chunk("block-end", index=COUNT, block=CONTENT_BLOCK)),
            ("usage", _chunk("usage", usage=TOKEN_USAGE)),
            ("finish", _chunk("finish", {"replayState": REPLAY_ENVELOPE}, reason=FINISH_REASON)),
        ),
    ),
)

# -- turns -------------------------------------------------------------------------------------

_PLAIN_CAUSE = Record(required={"kind": Literal("user", "parent", "disposed", "legacy")})

ABORT_CAUSE = Named(
    "abortCause",
    "Who aborted a turn.",
    lambda: Variants(
        "kind",
        (
            ("hook", Record(required={"kind": Literal("hook"), "reason": TEXT})),
            ("user", _PLAIN_CAUSE),
            ("parent", _PLAIN_CAUSE),
            ("disposed", _PLAIN_CAUSE),
            ("legacy", _PLAIN_CAUSE),
        ),
    ),
)

_PLAIN_END = Record(required={"kind": Literal("completed", "blocked", "max-tokens", "interrupted")})

TURN_END_REASON = Named(
    "turnEndReason",
    "Why a turn ended; a reason of an unknown kind is kept as owner-opaque JSON.",
    lambda: merge_extensible(
        "kind",
        {
            "completed": _PLAIN_END,
            "blocked": _PLAIN_END,
            "max-tokens": _PLAIN_END,
            "interrupted": _PLAIN_END,
            "aborted": Record(required={"kind": Literal("aborted"), "reason": ABORT_CAUSE}),
            "error": Record(required={"kind": Literal("error"), "error": LLM_FAILURE}),
        },
    ),
)
# -- request headers ---------------------------------------------------------------------------

TOOL_SCHEMA = Named(
    "toolSchema",
    "A tool offered to the model; its parameters are any JSON object (a JSON Schema).",
    lambda: Record(required={"name": NON_EMPTY, "description": TEXT, "parameters": OPAQUE_OBJECT}),
)

REQUEST_CONFIG = Named(
    "requestConfig",
    "The model call's configuration: provider and model pinned.",
    lambda: Record(
        required={"provider": NON_EMPTY, "model": NON_EMPTY},
        optional={"reasoningEffort": NON_EMPTY, "temperature": Finite(), "maxTokens": POSITIVE, "stop": Array(TEXT)},
    ),
)

REQUEST_HEADER = Named(
    "requestHeader",
    "A full request header snapshot.  adapterDefaults marks config values the adapter chose; each "
    "marked value is present in config.",
    lambda: Related(
        Record(
            required={"config": REQUEST_CONFIG},
            optional={
                "adapterDefaults": Record(optional={"reasoningEffort": TRUE, "maxTokens": TRUE}),
                "system": TEXT,
                "tools": Array(TOOL_SCHEMA),
            },
        ),
        (MembersWithin(("adapterDefaults",), ("config",)),),
    ),
)

# -- compaction --------------------------------------------------------------------------------

SHADOWED_MEMBERS: Mapping[str, Shape] = MappingProxyType(
    {
        "shadowedRange": Record(required={"start": EARLIER_SEQ, "end": EARLIER_SEQ}),
        "shadowedSeqs": seqs(non_empty=True),
        "shadowedTokenCount": COUNT,
    }
)
"""The surface span a compaction hides: its endpoints and every seq in it."""

SHADOWED_RELATIONS = (
    Equal(("shadowedRange", "start"), ("shadowedSeqs", 0)),
    Equal(("shadowedRange", "end"), ("shadowedSeqs", -1)),
)
"""The range's endpoints are the first and the last shadowed seq."""

# -- goals and schedules -----------------------------------------------------------------------

GOAL_REF = Named("goalRef", "A goal revision, by id.", lambda: Record(required={"id": NON_EMPTY, "revision": POSITIVE}))

_GOAL_BASE: dict[str, Shape] = {"id": NON_EMPTY, "revision": POSITIVE, "objective": NON_EMPTY}


def _goal_phase(*phases: str, blocked: bool = False) -> Record:
    reason: dict[str, Shape] = {"blockedReason": Record(required={"code": NON_EMPTY, "message": NON_EMPTY})} if blocked else {}
    return Record(required={**_GOAL_BASE, "phase": Literal(*phases), "maxGoalRounds": POSITIVE, **reason})


_OPEN_GOAL = _goal_phase("active", "paused", "complete")

GOAL_SNAPSHOT = Named(
    "goalSnapshot",
    "A goal revision; only a blocked goal carries (and must carry) its blocked reason.",
    lambda: Variants(
        "phase",
        (
            ("active", _OPEN_GOAL),
            ("paused", _OPEN_GOAL),
            ("blocked", _goal_phase("blocked", blocked=True)),
            ("complete", _OPEN_GOAL),
        ),
    ),
)

GOAL_OPERATIONS = ("create", "edit", "pause", "resume", "complete", "block")

_GOAL_HEAD: dict[str, Shape] = {"kind": Literal("goal/change"), "version": Literal(1)}
_GOAL_SET = Record(
    required={
        **_GOAL_HEAD,
        "operation": Literal(*GOAL_OPERATIONS),
        "goal": GOAL_SNAPSHOT,
        "roundsStarted": COUNT,
        "createdAt": COUNT,
        "updatedAt": COUNT,
    }
)
_GOAL_CLEAR = Record(required={**_GOAL_HEAD, "operation": Literal("clear"), "cleared": GOAL_REF, "clearedAt": COUNT})

GOAL_CHANGE_VARIANTS = Variants("operation", (("clear", _GOAL_CLEAR), *((op, _GOAL_SET) for op in GOAL_OPERATIONS)))

GOAL_CHANGE = Named(
    "goalChange",
    "A change of the session goal: the new revision and its round counts, or the cleared goal.",
    lambda: GOAL_CHANGE_VARIANTS,
)

_SCHEDULE_HEAD: dict[str, Shape] = {"id": SCHEDULE_ID, "prompt": NON_EMPTY, "scheduledAt": INSTANT}

SCHEDULE_RECORD = Named(
    "scheduleRecord",
    "A scheduled prompt: once after a delay, once at an instant, or every so many seconds (at least 300).",
    lambda: Variants(
        "kind",
        (
            ("after", Record(required={**_SCHEDULE_HEAD, "kind": Literal("after"), "afterSeconds": POSITIVE})),
            ("at", Record(required={**_SCHEDULE_HEAD, "kind": Literal("at")})),
            ("every", Record(required={**_SCHEDULE_HEAD, "kind": Literal("every"), "everySeconds": Integer(300)})),
        ),
    ),
)

_SCHEDULE_OP: dict[str, Shape] = {"version": Literal(1)}

SCHEDULE_CHANGE = Variants(
    "operation",
    (
        ("create", Record(required={**_SCHEDULE_OP, "operation": Literal("create"), "schedule": SCHEDULE_RECORD})),
        ("delete", Record(required={**_SCHEDULE_OP, "operation": Literal("delete"), "id": SCHEDULE_ID})),
        (
            "dispatch",
            Record(
                required={**_SCHEDULE_OP, "operation": Literal("dispatch"), "id": SCHEDULE_ID}, optional={"acceptedAt": INSTANT}
            ),
        ),
    ),
)

# -- titles, subagents, teams, search ----------------------------------------------------------

_PLAIN_TITLE = Record(required={"kind": Literal("fallback", "user")})

TITLE_SOURCE = Named(
    "titleSource",
    "Who chose a session title.",
    lambda: Variants(
        "kind",
        (
            ("provider", Record(required={"kind": Literal("provider"), "provider": NON_EMPTY}, optional={"model": MODEL_ROUTE})),
            ("fallback", _PLAIN_TITLE),
            ("user", _PLAIN_TITLE),
        ),
    ),
)

_DESCRIPTOR_HEAD: dict[str, Shape] = {"version": Literal(3), "provider": NON_EMPTY}

SUBAGENT_DESCRIPTOR_V3 = Named(
    "subagentDescriptorV3",
    "A subagent descriptor of version 3: a one-shot subagent, or a continuable one with its own "
    "agent route (provider and model together), persona and tool filter.",
    lambda: Variants(
        "mode",
        (
            ("one-shot", Record(required={"mode": Literal("one-shot"), **_DESCRIPTOR_HEAD}, optional={"label": TEXT})),
            (
                "continuable",
                Record(
                    required={"mode": Literal("continuable"), **_DESCRIPTOR_HEAD, "label": NON_EMPTY},
                    optional={
                        "agentProvider": NON_EMPTY,
                        "agentModel": NON_EMPTY,
                        "agentReasoningEffort": NON_EMPTY,
                        "persona": NON_EMPTY,
                        "toolFilter": Record(optional={"allow": Array(NON_EMPTY), "deny": Array(NON_EMPTY)}, min_members=1),
                    },
                    dependent_required={"agentProvider": ("agentModel",), "agentModel": ("agentProvider",)},
                ),
            ),
        ),
    ),
)

TEAM_MEMBER = Named(
    "teamMember",
    "A member of an agent team.",
    lambda: Record(
        required={
            "id": NON_EMPTY,
            "name": TEXT,
            "description": TEXT,
            "provider": TEXT,
            "context": Literal("fresh", "fork"),
            "phase": Literal("provisioning", "active", "failed"),
        },
        optional={"error": TEXT},
    ),
)

TEAM_TASK = Named(
    "teamTask",
    "A task on a team's board.",
    lambda: Record(
        required={
            "id": NON_EMPTY,
            "revision": POSITIVE,
            "subject": TEXT,
            "description": TEXT,
            "status": Literal("pending", "in_progress", "completed", "deleted"),
            "blockedBy": Array(NON_EMPTY),
            "writeScopes": Array(TEXT),
        },
        optional={"ownerId": NON_EMPTY},
    ),
)

TEAM_MESSAGE = Named(
    "teamMessage",
    "A message between team members.",
    lambda: Record(
        required={
            "id": NON_EMPTY,
            "senderId": NON_EMPTY,
            "senderName": TEXT,
            "targetId": NON_EMPTY,
            "delivery": Literal("quiet", "wakeup"),
            "content": CONTENT_BLOCKS,
        }
    ),
)

TEAM_SELECTOR: Mapping[str, Shape] = MappingProxyType({"version": Literal(1), "teamId": NON_EMPTY})

SEARCH_BODY = Named(
    "deepSeekSearchBody",
    "The body of a web-search model request: one user message of one text block, one web search tool.",
    lambda: Record(
        required={
            "model": NON_EMPTY,
            "max_tokens": POSITIVE,
            "messages": exactly_one(
                Record(
                    required={
                        "role": Literal("user"),
                        "content": exactly_one(Record(required={"type": Literal("text"), "text": TEXT})),
                    }
                )
            ),
            "tools": exactly_one(
                Record(required={"type": Literal("web_search_20250305"), "name": Literal("web_search"), "max_uses": POSITIVE})
            ),
        }
    ),
)

# -- the table ---------------------------------------------------------------------------------

_STEP: dict[str, Shape] = {"turn": COUNT, "step": COUNT}
"""A turn and step coordinate (the payload admits 0; the trace numbers them)."""

_RETRY_HEAD: dict[str, Shape] = {
    "retryId": NON_EMPTY,
    **_STEP,
    "provider": NON_EMPTY,
    "policyKey": NON_EMPTY,
    "retry": POSITIVE,
    "delayMs": Finite(minimum=0, maximum=2147483647),
    "failure": LLM_FAILURE,
}

_DISPATCH: dict[str, Shape] = {
    "rootCallId": NON_EMPTY,
    "parentCallId": NON_EMPTY,
    "subCallId": NON_EMPTY,
    "name": NON_EMPTY,
    "arguments": OPAQUE,
}


def _delivery_accepted(generation: int) -> Shape:
    checked: dict[str, Shape] = {"sessionId": NON_EMPTY, "throughSeq": EARLIER_SEQ}
    if generation == 0:
        return Record(required=checked)
    unchecked: dict[str, Shape] = {"sessionId": OPAQUE, "throughSeq": OPAQUE}
    return Variants(
        "sessionFormatVersion",
        (
            (ABSENT, Record(required=unchecked)),
            (1, Record(required={**checked, "sessionFormatVersion": Literal(1)})),
        ),
        otherwise=Record(required={**unchecked, "sessionFormatVersion": COUNT}),
    )


def _subagent_descriptor(generation: int) -> Shape:
    other = None if generation == 0 else Record(required={"version": COUNT}, additional=OPAQUE)
    return Variants("version", ((3, SUBAGENT_DESCRIPTOR_V3),), otherwise=other)


def _table(generation: int) -> Mapping[str, Shape]:
    g = _Generation(generation)
    table: dict[str, Shape] = {
        "agent-preset/selected": Record(required={"agentPreset": TEXT}),
        "agent/inbox/spliced": Record(
            required={"target": Literal("next-turn", "next-step"), "start": COUNT, "inserted": Array(g.user_message)},
            optional={"removedCount": COUNT, "outcome": Literal("canceled")},
        ),
        "approval/asked": Record(
            required={"id": NON_EMPTY, "toolName": NON_EMPTY}, optional={"callId": NON_EMPTY, "reason": TEXT}
        ),
        "approval/decided": Record(
            required={"id": NON_EMPTY, "outcome": Literal("allowed-once", "rejected", "cancelled", "unavailable")}
        ),
        "approval/policy": Record(required={"policy": Literal("ask", "never")}, optional={"source": Literal("delegation")}),
        "assistant/chunk": Record(required={**_STEP, "chunk": STREAM_CHUNK}),
        "assistant/message": Record(
            required={**_STEP, "message": ASSISTANT_MESSAGE}, optional={"usage": TOKEN_USAGE, "interrupted": TRUE}
        ),
        "command/done": Record(
            required={"commandId": NON_EMPTY, "kind": Literal("success", "error")},
            optional={"text": TEXT, "sourceEventSeq": EARLIER_SEQ},
        ),
        "command/run": Record(
            required={"commandId": NON_EMPTY, "name": NON_EMPTY, "source": Record(required={"kind": Literal("user")})},
            optional={"args": TEXT},
        ),
        "compaction/end": Record(
            required={"compactionId": NON_EMPTY, "turn": Nullable(COUNT)}, optional={"sourceCommandId": NON_EMPTY, "error": TEXT}
        ),
        "compaction/prune": Related(Record(required=SHADOWED_MEMBERS), SHADOWED_RELATIONS),
        "compaction/start": Record(
            required={"compactionId": NON_EMPTY, "turn": Nullable(COUNT)}, optional={"sourceCommandId": NON_EMPTY}
        ),
        "compaction/summary": Related(
            Record(
                required={
                    "compactionId": NON_EMPTY,
                    "summary": CONTENT_BLOCKS,
                    **SHADOWED_MEMBERS,
                    "provider": NON_EMPTY,
                    "model": NON_EMPTY,
                },
                optional={
                    "sourceCommandId": NON_EMPTY,
                    "maxTokens": COUNT,
                    "usage": TOKEN_USAGE,
                    "rawOutput": CONTENT_BLOCKS,
                    "llmStreamCall": TRUE,
                },
                dependent_required={"llmStreamCall": ("rawOutput",)},
            ),
            SHADOWED_RELATIONS,
        ),
        "feedback/record": Record(required={"text": NON_EMPTY}),
        "goal/change": GOAL_CHANGE,
        "hook/invoked": Record(
            required={"turn": COUNT, "point": NON_EMPTY, "dialect": Literal("claude-code", "codex"), "handlerId": NON_EMPTY},
            optional={"matcher": TEXT},
        ),
        "hook/result": Record(
            required={
                "turn": COUNT,
                "point": NON_EMPTY,
                "handlerId": NON_EMPTY,
                "decision": NON_EMPTY,
                "durationMs": Finite(minimum=0),
            },
            optional={"exitCode": SAFE_INT, "stderrSummary": TEXT},
        ),
        "llm/retry": Related(
            Variants(
                "mode",
                (
                    ("normal", Record(required={**_RETRY_HEAD, "mode": Literal("normal"), "maxRetries": POSITIVE})),
                    ("always", Record(required={**_RETRY_HEAD, "mode": Literal("always")})),
                ),
            ),
            (NotAbove(("retry",), ("maxRetries",)),),
        ),
        "llm/retry-started": Record(required={"retryId": NON_EMPTY, **_STEP, "retry": POSITIVE}),
        "model/selection": Record(required={"provider": NON_EMPTY, "model": NON_EMPTY}, optional={"reasoningEffort": NON_EMPTY}),
        "permission/preset": Record(required={"preset": NON_EMPTY}),
        "plan/mode": Record(required={"active": BOOL}),
        "request/context": Record(required={"provider": NON_EMPTY, "model": NON_EMPTY}, optional={"contextWindow": POSITIVE}),
        "request/header": Record(
            required={"header": REQUEST_HEADER, "reason": Literal("initial", "resume", "change", "series")},
            optional={"startsSeries": TRUE},
        ),
        "sandbox/mode": Record(
            required={"mode": Literal("read-only", "workspace-write", "danger-full-access")},
            optional={"source": Literal("delegation")},
        ),
        "schedule/change": SCHEDULE_CHANGE,
        "session-log-deepseek/delivery-accepted": _delivery_accepted(generation),
        "session/end-seed": Record(),
        "session/title": Record(required={"title": NON_EMPTY, "messageSeqs": seqs(), "source": TITLE_SOURCE}),
        "session/title-llm-request": Record(
            required={
                "titleProvider": NON_EMPTY,
                "messageSeqs": seqs(non_empty=True),
                "route": MODEL_ROUTE,
                "system": TEXT,
                "messages": Array(g.any_message),
                "maxTokens": POSITIVE,
            }
        ),
        "step/end": Record(required=_STEP),
        "step/start": Record(required=_STEP),
        "subagent/descriptor": _subagent_descriptor(generation),
        "subagent/model-selection-policy": Record(required={"allowedModels": Array(MODEL_ROUTE, min_items=1, unique=True)}),
        "team/member": Record(required={**TEAM_SELECTOR, "member": TEAM_MEMBER}),
        "team/message/delivered": Record(required={**TEAM_SELECTOR, "messageId": NON_EMPTY, "targetId": NON_EMPTY}),
        "team/message/queued": Record(required={**TEAM_SELECTOR, "message": TEAM_MESSAGE}),
        "team/task": Record(required={**TEAM_SELECTOR, "task": TEAM_TASK}),
        "todo/write": Record(
            required={
                "todos": Array(Record(required={"content": TEXT, "status": Literal("pending", "in_progress", "completed")}))
            }
        ),
        "tool-workflow/agent-end": Record(
            required={"runId": NON_EMPTY, "seq": POSITIVE, "outcome": Literal("completed", "failed", "cancelled")}
        ),
        "tool-workflow/agent-start": Record(
            required={"runId": NON_EMPTY, "seq": POSITIVE, "label": TEXT, "childId": NON_EMPTY}, optional={"phase": TEXT}
        ),
        "tool-workflow/run-end": Record(required={"runId": NON_EMPTY, "stopReason": Literal("completed", "cancelled", "error")}),
        "tool-workflow/run-start": Record(required={"runId": NON_EMPTY, "name": NON_EMPTY}),
        "tool/call": Record(required={**_STEP, "callId": NON_EMPTY, "name": NON_EMPTY, "arguments": TEXT}),
        "tool/code-dispatch": Record(required={**_DISPATCH, "isError": BOOL, "content": CONTENT_BLOCKS}),
        "tool/code-dispatch-start": Record(required=_DISPATCH),
        "tool/result": Record(
            required={**_STEP, "message": TOOL_MESSAGE},
            optional={"error": Record(required={"name": NON_EMPTY, "code": NON_EMPTY}), "meta": OPAQUE},
        ),
        "turn/end": Record(required={"turn": COUNT, "reason": TURN_END_REASON}),
        "turn/start": Record(required={"turn": COUNT}),
        "user/message": g.user_message,
        "web/deepseek-search-llm-request": Record(required={"endpoint": NON_EMPTY, "apiVersion": NON_EMPTY, "body": SEARCH_BODY}),
    }
    assert set(table) == KNOWN_EVENT_TYPES, sorted(set(table) ^ KNOWN_EVENT_TYPES)
    return MappingProxyType(dict(sorted(table.items())))


_TABLES: Mapping[int, Mapping[str, Shape]] = MappingProxyType({generation: _table(generation) for generation in GENERATIONS})

EVENT_PAYLOADS: Mapping[str, Shape] = _TABLES[CURRENT_GENERATION]
"""Each event type's payload shape, generation 1 (current)."""


def payload_shape(event_type: str, version: int) -> Shape:
    """The payload shape of ``event_type`` in payload generation ``version`` (0 or 1).

    Raises ``KeyError`` for a type outside the vocabulary and ``ValueError`` for another generation.
    """
    if version not in _TABLES:
        raise ValueError(f"payload generation {version} is not 0 or 1")
    return _TABLES[version][event_type]


def payload_problem(event_type: str, data: JsonValue | RawJson, seq: int, version: int = CURRENT_GENERATION) -> str | None:
    """The first problem of an event's ``data`` (frozen or plain JSON), or ``None``.

    ``seq`` is the event's own seq (members naming earlier events must be lower).  The problem names
    its JSON path below ``data`` (``$`` is ``data`` itself).  A value nested too deeply to walk is
    refused.
    """
    shape = payload_shape(event_type, version)
    try:
        return shape_problem(shape, data, "$", Context(seq))
    except RecursionError:
        return "$ is nested too deeply"


def payload_reaches_opaque(event_type: str, data: JsonValue | RawJson, version: int = CURRENT_GENERATION) -> bool:
    """Whether an event's ``data`` holds an opaque member's value or an unknown variant of a
    merge-extensible union (INV-PAY-3); ``False`` for a type outside the vocabulary."""
    if event_type not in _TABLES[version]:
        return False
    return reaches_opaque(payload_shape(event_type, version), data)


# -- what readers need -------------------------------------------------------------------------

PAYLOAD_MEMBERS: Mapping[str, Members] = MappingProxyType({t: members_of(s) for t, s in EVENT_PAYLOADS.items()})
"""Per type (generation 1): the members every payload has, the other admitted members, and the
members kept as opaque JSON."""

REQUIRED_MEMBERS: Mapping[str, tuple[str, ...]] = MappingProxyType({t: m.required for t, m in PAYLOAD_MEMBERS.items()})
OPTIONAL_MEMBERS: Mapping[str, tuple[str, ...]] = MappingProxyType({t: m.optional for t, m in PAYLOAD_MEMBERS.items()})
OPAQUE_MEMBERS: Mapping[str, tuple[str, ...]] = MappingProxyType({t: m.opaque for t, m in PAYLOAD_MEMBERS.items() if m.opaque})
"""Top-level members retained as lossless JSON without inspection: ``tool/result`` ``meta`` and the
code-dispatch ``arguments``."""


def payload_members(event_type: str, version: int) -> Members:
    """The top-level members of ``event_type`` in payload generation ``version``."""
    return members_of(payload_shape(event_type, version))


MERGE_EXTENSIBLE: Mapping[str, str] = MappingProxyType(
    {
        CONTENT_BLOCK.name: "type",
        "messageSource": "kind",
        "userMessageSource": "kind",
        FINISH_REASON.name: "kind",
        TURN_END_REASON.name: "kind",
    }
)
"""The merge-extensible unions, by shared shape name, and their discriminant members: a value whose
discriminant is a non-empty string no arm names is owner-opaque JSON (kept, not inspected)."""

OPAQUE_VARIANTS: Mapping[str, str] = MappingProxyType(
    {"subagent/descriptor": "version", "session-log-deepseek/delivery-accepted": "sessionFormatVersion"}
)
"""Event types (generation 1) whose payload of an unknown version is kept as opaque JSON, and the
member that holds the version: a descriptor of a version other than 3, an acceptance of a format
other than 1 (or of none)."""

# -- the stored header line --------------------------------------------------------------------

HEADER_LINE = Named(
    "headerLine",
    "The first line of a stored log: format version, session id, creation time, delegation depth and "
    "the optional seed length, working directory, parent, origin and agent preset.",
    lambda: Record(
        required={
            "type": Literal("session"),
            "version": Literal(*GENERATIONS),
            "id": TEXT,
            "createdAt": COUNT,
            "delegationDepth": COUNT,
        },
        optional={
            "cwd": Str(form=StrForm.ABSOLUTE_PATH),
            "parentSession": TEXT,
            "seedLength": COUNT,
            "origin": Literal("subagent"),
            "agentPreset": TEXT,
        },
    ),
)
"""The stored header line (the rules of :func:`sessionlog_spec.model.jsonl.header_line_problem`);
``seedLength`` must also not exceed the events read, which only the whole log can tell."""
