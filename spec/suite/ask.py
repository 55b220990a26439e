"""``sessionlog-check ask``: put protocol requests to the model (or to any port) and print the replies.

One request is a JSON object in the protocol's own spelling (``{"op": "fold_header", "events": [...]}``;
an ``id`` is optional).  Given as an argument, it is asked alone; given on standard input, one
request per line, every line goes to the same port in order, so a ``seed`` followed by an
``append`` asks about the session the seed built.  Each reply is printed as one JSON line in the
protocol's reply spelling, with the request's ``id`` when it had one.

Exit status: 0 once every request was answered (a refusal is an answer), 1 when the port broke the
protocol or could not start, 2 for a request that is not a JSON object naming an ``op`` (nothing
is sent for it, nor for the lines after it).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

from sessionlog_spec.protocol import jsonlines
from sessionlog_spec.protocol.messages import Ok, Port, PortFault
from sessionlog_spec.suite.commands import FAILED, USAGE_ERROR, PortError, opened, start_failed

HELP = (
    "send protocol requests (JSON objects naming an op) to the model, or to a port given with --port/--driver, "
    "and print each reply as a JSON line; requests come from the argument, or one per line from stdin"
)


class BadRequestLine(ValueError):
    """A request that is not a JSON object naming an ``op``."""


def parse_request(text: str, where: str) -> dict[str, Any]:
    """One request read exactly (integers beyond 2^53 kept), or :class:`BadRequestLine` saying why not."""
    try:
        value = jsonlines.loads(text.encode("utf-8"))
    except (ValueError, UnicodeEncodeError) as error:
        raise BadRequestLine(f"{where}: not JSON ({error})") from None
    if not isinstance(value, dict):
        raise BadRequestLine(f"{where}: a request is a JSON object, got {type(value).__name__}")
    if not isinstance(value.get("op"), str) or not value["op"]:
        raise BadRequestLine(f'{where}: a request names its op as a non-empty string ({{"op": "state"}})')
    return value


def requests_from(argument: str | None, stdin: TextIO) -> Iterator[tuple[str, str]]:
    """The requests' texts with where each came from: the argument alone, or stdin's non-blank lines."""
    if argument is not None and argument != "-":
        yield "request", argument
        return
    for number, line in enumerate(stdin, start=1):
        if line.strip():
            yield f"stdin line {number}", line


def answer(port: Port, request: dict[str, Any]) -> dict[str, Any]:
    """The port's reply to one request, in the protocol's reply spelling."""
    args = {k: v for k, v in request.items() if k not in ("op", "id")}
    reply = port.call(request["op"], **args)
    shaped: dict[str, Any] = {"id": request["id"]} if "id" in request else {}
    if isinstance(reply, Ok):
        return {**shaped, "ok": True, "result": reply.result}
    return {**shaped, "ok": False, "error": {"code": reply.code, "message": reply.message}}


def run(
    argument: str | None,
    driver: str | None,
    port: str | None,
    timeout: float,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Ask every request in turn of one port (the model unless told otherwise); see the module for the exit status."""
    out = stdout or sys.stdout
    texts: Iterable[tuple[str, str]] = requests_from(argument, stdin or sys.stdin)
    try:
        with opened(driver, port if driver is not None or port is not None else "model", timeout) as target:
            for where, text in texts:
                try:
                    request = parse_request(text, where)
                except BadRequestLine as error:
                    print(f"ask: {error}", file=sys.stderr)
                    return USAGE_ERROR
                out.write(jsonlines.dumps(answer(target, request)).decode("utf-8"))
                out.flush()
    except PortError as error:
        start_failed(error, sys.stderr)
        return FAILED
    except PortFault as error:
        print(f"ask: {error}", file=sys.stderr)
        return FAILED
    return 0
