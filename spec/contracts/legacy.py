"""INV-LEGACY: the v0-to-v1 edge refuses what it cannot convert and converts the rest losslessly."""

from __future__ import annotations

from collections.abc import Mapping

import icontract

from sessionlog_spec.contracts import ENABLED
from sessionlog_spec.contracts._support import accepted
from sessionlog_spec.model import legacy as _legacy
from sessionlog_spec.model.json_value import is_safe_natural, json_equal
from sessionlog_spec.model.legacy import COMPACT_RENAMES, V0_INVENTORY, StoredLog
from sessionlog_spec.model.session import fold_session
from sessionlog_spec.model.violation import Violation


def _types(log: StoredLog) -> list[object]:
    return [e.get("type") for e in log.events if isinstance(e, Mapping)]


def _is_v0(log: StoredLog) -> bool:
    return log.header.get("version") == 0


def no_header_delta(log: StoredLog) -> bool:
    """INV-LEGACY-1."""
    return "request/header-delta" not in _types(log)


def _reason(data: object) -> object:
    return data.get("reason") if isinstance(data, Mapping) else None


def no_fallback(log: StoredLog) -> bool:
    """INV-LEGACY-2."""
    return not any(
        isinstance(e, Mapping) and e.get("type") == "request/header" and _reason(e.get("data")) == "fallback"
        for e in log.events
    )


def no_mode_set(log: StoredLog) -> bool:
    """INV-LEGACY-3."""
    return "mode/set" not in _types(log)


def inventory_only(log: StoredLog) -> bool:
    """INV-LEGACY-4."""
    return not _is_v0(log) or all(t in V0_INVENTORY for t in _types(log))


def only_enumerated_changes(log: StoredLog, result: StoredLog) -> bool:
    """INV-LEGACY-5: same events in the same order, each envelope kept member for member (seq, time,
    ``ignorable``, ``surfaceOp``, sources: none added, none dropped); types renamed only by N3/N7."""
    if len(log.events) != len(result.events):
        return False
    renames = {**COMPACT_RENAMES, "steering/message": "user/message"}
    for before, after in zip(log.events, result.events, strict=True):
        if not isinstance(before, Mapping) or before.keys() != after.keys():
            return False
        kept = all(json_equal(before[k], after[k]) for k in before if k not in ("type", "data"))
        type_ok = after.get("type") == renames.get(str(before.get("type")), before.get("type"))
        if not (kept and type_ok):
            return False
    return True


def output_is_v1(result: StoredLog) -> bool:
    """INV-LEGACY-6: valid v1, read as the edge reads its output (the interrupted-turn restart admitted)."""
    return result.header.get("version") == 1 and not isinstance(fold_session(result.events, legacy_restart=True), Violation)


def fixed_point(result: StoredLog) -> bool:
    """INV-LEGACY-7."""
    return _legacy.upgrade_v0(result) == result


def no_legacy_forms(result: StoredLog) -> bool:
    """INV-LEGACY-8."""
    for event in result.events:
        type_ = event.get("type")
        data = event.get("data")
        if type_ == "steering/message" or type_ in COMPACT_RENAMES:
            return False
        if not isinstance(data, Mapping):
            continue
        if type_ == "turn/start" and "trigger" in data:
            return False
        header = data.get("header")
        if type_ == "request/header" and isinstance(header, Mapping) and "messagePrefix" in header:
            return False
        reason = data.get("reason")
        if type_ == "turn/end" and isinstance(reason, Mapping) and _legacy_reason(reason):
            return False
    return True


def sources_valid(log: StoredLog) -> bool:
    """INV-LEGACY-9: each event of a v0 log is an object at its own seq with object data, and each
    legacy form has exactly the members a released v0 writer gave it."""
    if not _is_v0(log):
        return True
    for index, event in enumerate(log.events):
        data = event.get("data") if isinstance(event, Mapping) else None
        if not isinstance(data, Mapping) or event.get("seq") != index:
            return False
        if not _legacy_form_valid(event.get("type"), data):
            return False
    return True


def _legacy_form_valid(type_: object, data: Mapping[str, object]) -> bool:
    members = set(data)
    if type_ == "turn/start" and "trigger" in data:
        trigger = data["trigger"]
        kind = trigger.get("kind") if isinstance(trigger, Mapping) else None
        return members == {"turn", "trigger"} and isinstance(kind, str) and kind != ""
    if type_ == "steering/message":
        return members in ({"turn", "message"}, {"turn", "content", "source"})
    if type_ == "turn/end":
        reason = data.get("reason")
        if members != {"turn", "reason"} or not isinstance(reason, Mapping):
            return False
        if reason.get("kind") == "error" and "error" not in reason:
            step = reason.get("step")
            shape = {"kind", "step", "failure"} if "failure" in reason else {"kind", "step", "message"}
            return is_safe_natural(step) and shape <= set(reason)
    return True


def _legacy_reason(reason: Mapping[str, object]) -> bool:
    """A ``turn/end`` reason in a v0 spelling: ``disposed``, a cause-less abort, an error without its record."""
    kind = reason.get("kind")
    return kind == "disposed" or (kind == "aborted" and "reason" not in reason) or (kind == "error" and "error" not in reason)


@icontract.ensure(lambda log, result: not accepted(result) or no_header_delta(log), "INV-LEGACY-1", enabled=ENABLED)
@icontract.ensure(lambda log, result: not accepted(result) or no_fallback(log), "INV-LEGACY-2", enabled=ENABLED)
@icontract.ensure(lambda log, result: not accepted(result) or no_mode_set(log), "INV-LEGACY-3", enabled=ENABLED)
@icontract.ensure(lambda log, result: not accepted(result) or inventory_only(log), "INV-LEGACY-4", enabled=ENABLED)
@icontract.ensure(
    lambda log, result: not accepted(result) or only_enumerated_changes(log, result),
    "INV-LEGACY-5",
    enabled=ENABLED,
)
@icontract.ensure(lambda result: not accepted(result) or output_is_v1(result), "INV-LEGACY-6", enabled=ENABLED)
@icontract.ensure(lambda result: not accepted(result) or fixed_point(result), "INV-LEGACY-7", enabled=ENABLED)
@icontract.ensure(lambda result: not accepted(result) or no_legacy_forms(result), "INV-LEGACY-8", enabled=ENABLED)
@icontract.ensure(lambda log, result: not accepted(result) or sources_valid(log), "INV-LEGACY-9", enabled=ENABLED)
def upgrade_v0(log: StoredLog) -> StoredLog | Violation:
    """Run the v0-to-v1 edge on a whole stored log."""
    return _legacy.upgrade_v0(log)
