"""The HTML page of a run, without a browser: every string from a report is escaped, the matrix says
each cell's state and codes, each failure carries its request, both replies and the replay command,
a comparison names every port, and ``html`` and ``check --html`` end bad usage in one line.

The reports here are written by hand, so that what the page must show does not come from the code
under test; ``test_html_browser.py`` opens pages of real runs in Chromium."""

from __future__ import annotations

import argparse
import copy
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from conformance_helpers import read_json, run_cli

from sessionlog_spec.suite.commands import write_outputs
from sessionlog_spec.suite.output.html import read_report, render_page, report_problem

HOSTILE = "</pre></code><script>document.title='pwned'</script><img src=x onerror=alert(1)>\"'&amp;"
"""A string a request or a reply may hold: it must reach the page as text."""
VOID_TAGS = frozenset({"meta", "br", "img", "input", "link", "hr", "wbr", "source", "col", "area", "base", "embed", "track"})


@dataclass
class Element:
    """One element of a parsed page: its tag, attributes and text (its descendants' included)."""

    tag: str
    attrs: dict[str, str]
    text: str = ""
    children: list[Element] = field(default_factory=list)

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def walk(self) -> Iterator[Element]:
        yield self
        for child in self.children:
            yield from child.walk()

    def find_all(self, tag: str, cls: str | None = None) -> list[Element]:
        return [e for e in self.walk() if e.tag == tag and (cls is None or cls in e.classes())]

    def find(self, tag: str, cls: str | None = None) -> Element:
        found = self.find_all(tag, cls)
        assert found, f"no <{tag} class={cls}>"
        return found[0]


class _TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("document", {})
        self.open = [self.root]
        self.tags: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        element = Element(tag, {k: v or "" for k, v in attrs})
        self.open[-1].children.append(element)
        if tag not in VOID_TAGS:
            self.open.append(element)

    def handle_endtag(self, tag: str) -> None:
        if tag in VOID_TAGS:
            return
        assert self.open[-1].tag == tag, f"</{tag}> closes <{self.open[-1].tag}>"
        self.open.pop()

    def handle_data(self, data: str) -> None:
        for element in self.open:
            element.text += data


def parsed(page: str) -> tuple[Element, list[str]]:
    """The page as a tree (every element closed where it was opened), and every tag it opens."""
    builder = _TreeBuilder()
    builder.feed(page)
    builder.close()
    assert builder.open == [builder.root], "an element was never closed"
    return builder.root, builder.tags


def failure(group: str, invariant: str, text: str = "x", expected: dict[str, str] | None = None) -> dict[str, Any]:
    """A failure of a report as ``check --report`` writes it."""
    return {
        "case": f"{group}/fold_surface/wrong-result",
        "kind": "wrong-result",
        "message": f"fold_surface: the port's result differs {text}",
        "invariants": [invariant],
        "codes": ["SOURCES_EMPTY"],
        "case_file": f"reports/cases/{group}-{text}.json",
        "replay": f"python -m sessionlog_spec replay reports/cases/{group}-{text}.json --driver 'node d.mjs {text}'",
        "failing": {
            "request_number": 3,
            "request": {"op": "fold_surface", "events": [{"type": "user/message", "seq": 0, "data": {"text": text}}]},
            "model": {"ok": True, "result": {"nodes": [0], "note": text}},
            "port": {"ok": False, "error": {"code": "SOURCES_EMPTY", "message": text}},
        },
        "flaky": False,
        "shrinking_stopped": False,
        "expected": expected,
    }


def report(name: str, arguments: str, groups: dict[str, dict[str, Any]], text: str = "run") -> dict[str, Any]:
    """A ``sessionlog-report/1`` document, with what every group and the run as a whole carry."""
    filled = {
        group: {
            "status": "passed",
            "expected_failure": None,
            "detail": "",
            "seconds": 1.5,
            "examples": 4,
            "steps": 20,
            "requests": 60,
            "invariants": {},
            "codes": {},
            "cells": {},
            **section,
        }
        for group, section in groups.items()
    }
    return {
        "format": "sessionlog-report/1",
        "verdict": "failed" if any(s["status"] != "passed" for s in filled.values()) else "passed",
        "reasons": [f"reason {text}"],
        "port": {
            "name": name,
            "version": "1.0",
            "protocol": "sessionlog-driver/1",
            "capabilities": list(groups),
            "format_version": 1,
            "arguments": arguments,
        },
        "profile": "dev",
        "seed": 7,
        "strict_codes": True,
        "seconds": 3.0,
        "groups": filled,
        "coverage": {
            "invariants": {},
            "codes": {},
            "never_exercised": {"invariants": ["INV-TRACE-1"], "codes": ["TURN_NUMBER"]},
            "cells": {"reached": 1, "reachable": 0, "never_reached": []},
            "judged": False,
            "unobservable": {},
        },
        "stale_expected_failures": [],
    }


def cells_of(page: str) -> dict[tuple[str, int], Element]:
    """The invariant matrix's cells by (invariant, column index)."""
    root, _ = parsed(page)
    table = root.find("table", "invariants")
    found = {}
    for row in table.find_all("tr"):
        if "data-invariant" in row.attrs:
            for index, cell in enumerate(row.find_all("td", "cell")):
                found[row.attrs["data-invariant"], index] = cell
    return found


class TestEscaping:
    def test_every_string_from_a_report_reaches_the_page_as_text_and_never_as_markup(self) -> None:
        """Hostile strings in every field a report carries are escaped: the page opens no tag of theirs."""
        hostile = failure("surface", "INV-SURF-12", HOSTILE)
        section: dict[str, Any] = {
            "status": "failed",
            "detail": HOSTILE,
            "invariants": {"INV-SURF-12": 2},
            "codes": {HOSTILE: 1},
            "cells": {f"INV-SURF-12 {HOSTILE} fold_surface": 1},
            "failures": [
                {
                    **hostile,
                    "case": HOSTILE,
                    "failing": {
                        "request_number": 1,
                        "request": {"op": "fold_surface", HOSTILE: HOSTILE},
                        "model": {"ok": True, "result": HOSTILE},
                        "port": {"fault": {"kind": "exit", "detail": HOSTILE, "stderr_tail": HOSTILE}},
                    },
                }
            ],
        }
        document = report(HOSTILE, HOSTILE, {"surface": section}, HOSTILE)
        document["coverage"]["cells"]["never_reached"] = [HOSTILE]
        document["stale_expected_failures"] = [{"names": HOSTILE, "reason": HOSTILE}]
        document["fault"] = {"kind": "exit", "detail": HOSTILE, "stderr_tail": HOSTILE}
        for page, name_in in ((render_page([document]), "h1"), (render_page([document, document]), "th")):
            root, tags = parsed(page)
            assert "script" not in tags and "img" not in tags
            assert not [name for e in root.walk() for name in e.attrs if name.startswith("on") or name in ("src", "href")]
            item = root.find("details", "failure")
            assert json.loads(item.find("pre", "request").text) == {"op": "fold_surface", HOSTILE: HOSTILE}
            assert json.loads(item.find("pre", "port").text)["fault"]["detail"] == HOSTILE
            assert item.find("pre", "replay").find("code").text == hostile["replay"]
            assert item.find("pre", "stderr").text == HOSTILE
            assert HOSTILE in item.find("summary").text
            assert any(HOSTILE in e.text for e in root.find_all(name_in)), "the port's name"
            assert any(HOSTILE in e.text for e in root.find_all("td")), "a reached cell"
            assert any(HOSTILE in e.text for e in root.find_all("p", "ids")), "a cell never reached"

    def test_the_page_loads_nothing_and_runs_no_script(self) -> None:
        """The page forbids every fetch and every script in its Content-Security-Policy, and has no link to follow."""
        page = render_page([report("p", "--port model", {"surface": {"invariants": {"INV-SURF-1": 1}}})])
        root, tags = parsed(page)
        [policy] = [m.attrs["content"] for m in root.find_all("meta") if m.attrs.get("http-equiv") == "Content-Security-Policy"]
        assert policy.startswith("default-src 'none';") and "script-src" not in policy
        assert not {"script", "link", "img", "iframe", "object"} & set(tags)
        assert not any(key in ("src", "href") for e in root.walk() for key in e.attrs)


class TestMatrix:
    def test_each_cell_says_passed_failed_expected_or_not_exercised_with_the_invariants_codes(self) -> None:
        """A cell is failed when an unexcused failure names its invariant, expected when only excused ones do,
        passed when its group exercised it, not exercised otherwise; it lists the invariant's codes the group exercised."""
        groups: dict[str, dict[str, Any]] = {
            "surface": {
                "status": "failed",
                "invariants": {"INV-SURF-1": 3, "INV-LOG-2": 5, "INV-SURF-12": 9},
                "codes": {"ENVELOPE_BAD_SEQ": 2, "SOURCES_EMPTY": 4},
                "failures": [failure("surface", "INV-SURF-12")],
            },
            "session": {
                "status": "failed",
                "expected_failure": {"names": "group session", "reason": "known"},
                "invariants": {"INV-SURF-1": 1, "INV-SURF-4": 2},
                "failures": [failure("session", "INV-SURF-4", expected={"names": "group session", "reason": "known"})],
            },
            "storage": {"status": "unsupported"},
        }
        cells = cells_of(render_page([report("p", "--port model", groups)]))
        session, surface, storage = 0, 1, 2  # the protocol's order of groups
        states = {key: cell.attrs["data-state"] for key, cell in cells.items()}
        assert states["INV-SURF-12", surface] == "failed"
        assert states["INV-SURF-4", session] == "expected"
        assert states["INV-SURF-1", surface] == states["INV-LOG-2", surface] == "passed"
        assert states["INV-SURF-12", session] == states["INV-LOG-2", session] == "not-exercised"
        assert states["INV-SURF-1", storage] == "unsupported"
        codes = [li.text for li in cells["INV-LOG-2", surface].find_all("li")]
        assert codes == ["ENVELOPE_BAD_SEQ ×2"], "INV-LOG-2's exercised code, and not SOURCES_EMPTY (another invariant's)"
        assert cells["INV-LOG-2", surface].find("span", "symbol").text == "✓"
        assert cells["INV-SURF-12", surface].find("span", "symbol").text == "✗"
        assert {invariant for invariant, _ in cells} == {"INV-SURF-1", "INV-LOG-2", "INV-SURF-12", "INV-SURF-4"}

    def test_a_group_that_ended_in_an_error_does_not_pass_what_it_exercised(self) -> None:
        page = render_page([report("p", "--port model", {"session": {"status": "error", "invariants": {"INV-SURF-1": 4}}})])
        assert cells_of(page)["INV-SURF-1", 0].attrs["data-state"] == "error"


class TestFailures:
    def test_a_failure_shows_its_request_both_replies_and_the_replay_command(self) -> None:
        """Each failure is a <details> item whose body holds the request and both replies as JSON and the replay command."""
        broken = failure("surface", "INV-SURF-12", "first")
        other = failure("surface", "INV-SURF-12", "second")
        page = render_page([report("p", "--driver 'node d.mjs'", {"surface": {"status": "failed", "failures": [broken, other]}})])
        root, _ = parsed(page)
        items = root.find_all("details", "failure")
        assert len(items) == 2
        for item, expected in zip(items, (broken, other), strict=True):
            assert expected["case"] in item.find("summary").text and expected["message"] in item.find("summary").text
            assert json.loads(item.find("pre", "request").text) == expected["failing"]["request"]
            assert json.loads(item.find("pre", "model").text) == expected["failing"]["model"]
            assert json.loads(item.find("pre", "port").text) == expected["failing"]["port"]
            assert item.find("pre", "replay").find("code").text == expected["replay"]
            assert "open" not in item.attrs, "a failure starts folded"

    def test_a_faults_stderr_tail_is_shown_with_the_failure(self) -> None:
        broken = failure("session", "INV-SURF-1")
        broken["failing"]["port"] = {"fault": {"kind": "exit", "detail": "died", "stderr_tail": "Traceback: boom\n"}}
        root, _ = parsed(render_page([report("p", "--port x", {"session": {"status": "failed", "failures": [broken]}})]))
        assert root.find("pre", "stderr").text == "Traceback: boom"


class TestComparison:
    def test_two_reports_give_one_column_per_port_named_by_its_port_and_driver(self) -> None:
        """Side by side, each column is headed by the port's name and version and its driver; each group and invariant
        shows each port's outcome, and the rows where the ports differ are marked."""
        passing = report("good-port", "--driver 'node good.mjs'", {"surface": {"invariants": {"INV-SURF-12": 5}}})
        failing = report(
            "bad-port",
            "--driver 'node bad.mjs'",
            {"surface": {"status": "failed", "invariants": {"INV-SURF-12": 5}, "failures": [failure("surface", "INV-SURF-12")]},
             "header": {"invariants": {"INV-HDR-1": 2}}},
        )  # fmt: skip
        page = render_page([passing, failing])
        root, _ = parsed(page)
        headers = [th.text for th in root.find("table", "invariants").find_all("th", "port")]
        assert headers == ["good-port 1.0--driver 'node good.mjs'", "bad-port 1.0--driver 'node bad.mjs'"]
        rows = {tr.attrs["data-group"]: [td.attrs["data-state"] for td in tr.find_all("td")]
                for tr in root.find("table", "groups-by-port").find_all("tr") if "data-group" in tr.attrs}  # fmt: skip
        assert rows == {"surface": ["passed", "failed"], "header": ["not-run", "passed"]}
        cells = cells_of(page)
        assert (cells["INV-SURF-12", 0].attrs["data-state"], cells["INV-SURF-12", 1].attrs["data-state"]) == ("passed", "failed")
        assert cells["INV-HDR-1", 0].attrs["data-state"] == "not-exercised", "no group of that run exercised it"
        differs = [
            tr.attrs["data-invariant"] for tr in root.find("table", "invariants").find_all("tr") if "differs" in tr.classes()
        ]
        assert differs == ["INV-SURF-12", "INV-HDR-1"]
        assert len(root.find_all("details", "failure")) == 1

    def test_one_report_gives_the_page_of_that_run(self) -> None:
        page = render_page([report("only-port", "--port model", {"surface": {}})])
        root, _ = parsed(page)
        assert root.find("h1").text.startswith("sessionlog conformance: only-port 1.0")
        assert not root.find_all("table", "groups-by-port")


def _places(value: Any, at: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    """Every place in a JSON value, as the keys and indices that lead there."""
    yield at
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield from _places(child, (*at, key))


FULL_REPORT = report(
    "p",
    "--port model",
    {
        "surface": {"status": "failed", "invariants": {"INV-SURF-12": 2}, "codes": {"SOURCES_EMPTY": 1},
                    "cells": {"INV-SURF-12 (log) fold_surface": 1}, "failures": [failure("surface", "INV-SURF-12")]},
        "session": {"status": "error", "invariants": {"INV-SURF-1": 1}},
    },
)  # fmt: skip
FULL_REPORT["stale_expected_failures"] = [{"names": "group jsonl", "reason": "r"}]
FULL_REPORT["fault"] = {"kind": "exit", "detail": "d", "stderr_tail": "t"}


ODD_VALUES: tuple[object, ...] = (None, True, 0, -1, 1.5, "", "<b>x</b>", [], ["x"], [{}], {}, {"k": 1})
"""A member of each JSON type, put in place of each member of a report in turn."""
REMOVED = object()


def test_a_report_that_passes_the_check_always_renders() -> None:
    """Whatever one member of a report is changed to or removed, the report is refused in one line or its page renders."""
    rendered = refused = 0
    for place in list(_places(FULL_REPORT))[1:]:
        for value in (*ODD_VALUES, REMOVED):
            document = copy.deepcopy(FULL_REPORT)
            parent: Any = document
            for key in place[:-1]:
                parent = parent[key]
            if value is REMOVED:
                del parent[place[-1]]
            else:
                parent[place[-1]] = value
            problem = report_problem(document)
            if problem is None:
                parsed(render_page([document]))
                parsed(render_page([document, FULL_REPORT]))
                rendered += 1
            else:
                assert "\n" not in problem and problem.startswith("not a sessionlog-report/1 document")
                refused += 1
    assert rendered > 100 and refused > 100


# -- the command line -------------------------------------------------------------------------------


def _write(path: Path, value: Any) -> Path:
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (None, "No such file or directory"),
        ("directory", "it is a directory"),
        ("{not json", "not JSON"),
        ([1, 2], "not a sessionlog-report/1 document: [1, 2] is not of type 'object'"),
        ({"format": "sessionlog-case/1"}, 'not a sessionlog-report/1 document (format "sessionlog-case/1")'),
        ("no-status", "not a sessionlog-report/1 document: 'status' is a required property at $.groups.surface"),
    ],
    ids=["missing", "directory", "not-json", "array", "case-file", "group-without-status"],
)
def test_html_of_an_unreadable_report_is_one_line_and_status_2(tmp_path: Path, content: Any, says: str) -> None:
    given = tmp_path / "report.json"
    if content == "directory":
        given.mkdir()
    elif content == "no-status":
        document = report("p", "--port model", {"surface": {}})
        del document["groups"]["surface"]["status"]
        _write(given, document)
    elif isinstance(content, str):
        given.write_text(content, encoding="utf-8")
    elif content is not None:
        _write(given, content)
    good = _write(tmp_path / "good.json", report("p", "--port model", {"surface": {}}))
    page = tmp_path / "page.html"
    done = run_cli("html", page, good, given)
    assert done.returncode == 2, done.stdout + done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"cannot read {given}: ") and says in line, line
    assert not page.exists()


def test_html_refuses_to_write_over_a_report_or_into_a_directory(tmp_path: Path) -> None:
    good = _write(tmp_path / "good.json", report("p", "--port model", {"surface": {}}))
    over = run_cli("html", good, good)
    assert over.returncode == 2 and over.stderr.splitlines() == [f"{good} is one of the reports: give the page another name"]
    assert read_report(good)["port"]["name"] == "p"
    into = run_cli("html", tmp_path, good)
    assert into.returncode == 2 and into.stderr.splitlines() == [
        f"OUT.html: {tmp_path} is a directory: give a file path, such as {tmp_path / 'report.html'}"
    ]


def test_html_writes_the_comparison_of_saved_reports(tmp_path: Path) -> None:
    first = _write(tmp_path / "a.json", report("port-a", "--driver 'node a.mjs'", {"surface": {}}))
    second = _write(tmp_path / "b.json", report("port-b", "--driver 'node b.mjs'", {"surface": {}}))
    page = tmp_path / "deep" / "er" / "page.html"
    done = run_cli("html", page, first, second)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"wrote {page}"]
    root, _ = parsed(page.read_text(encoding="utf-8"))
    assert [th.text for th in root.find("table", "ports").find_all("th", "port")] == [
        "port-a 1.0--driver 'node a.mjs'",
        "port-b 1.0--driver 'node b.mjs'",
    ]


def test_check_writes_the_page_also_when_the_port_cannot_start(tmp_path: Path) -> None:
    page, report_file = tmp_path / "out" / "page.html", tmp_path / "out" / "report.json"
    missing = tmp_path / "no-such-driver"
    checked = run_cli("check", "--driver", missing, "--profile", "dev", "--only", "header,repair", "--quiet",
                      "--html", page, "--report", report_file)  # fmt: skip
    assert checked.returncode == 1, checked.stderr
    root, _ = parsed(page.read_text(encoding="utf-8"))
    assert root.find("span", "verdict").text == "failed"
    assert f"cannot start {missing}" in root.find("pre", "stderr").text
    states = {tr.attrs["data-group"]: tr.find("span", "badge").attrs["data-state"]
              for tr in root.find("table", "groups").find_all("tr") if "data-group" in tr.attrs}  # fmt: skip
    assert states == {"header": "error", "repair": "error"}
    assert read_json(report_file)["verdict"] == "failed"


@pytest.mark.parametrize("other", ["--report", "--junit"])
def test_check_refuses_html_on_the_file_of_another_output(tmp_path: Path, other: str) -> None:
    started = tmp_path / "driver-started"
    same = tmp_path / "out"
    checked = run_cli("check", "--driver", f"touch {started}", "--quiet", other, same, "--html", tmp_path / "." / "out")
    assert checked.returncode == 2
    assert checked.stderr.splitlines() == [f"{other} and --html name the same file {same}"]
    assert not started.exists()


def test_a_page_that_cannot_be_written_after_the_run_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The page is written from the JSON report; when its path went bad during the run, one line names it."""
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    document = report("p", "--port model", {"surface": {}})
    args = argparse.Namespace(report=tmp_path / "report.json", junit=None, html=blocker / "page.html")
    assert not write_outputs(args, lambda: document, lambda: ET.ElementTree(ET.Element("testsuite")))
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"--html: cannot write {blocker / 'page.html'}: "), line
    assert read_json(tmp_path / "report.json") == document
    args.html = tmp_path / "page.html"
    assert write_outputs(args, lambda: document, lambda: ET.ElementTree(ET.Element("testsuite")))
    assert parsed(args.html.read_text(encoding="utf-8"))[0].find("h1").text.startswith("sessionlog conformance: p 1.0")
