"""What check, replay and vectors run write and print when something is wrong: bad output paths end
before the port starts, a port that cannot start still gets its reports, every failure carries its
request, both replies and a command that can be pasted, and no bad case file ends in a traceback."""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from conformance_helpers import ROOT, broken_driver, case_files, read_json, run_cli

from sessionlog_spec import cli
from sessionlog_spec.protocol.messages import PortFault
from sessionlog_spec.protocol.model_driver import ModelDriver
from sessionlog_spec.suite.commands import write_outputs
from sessionlog_spec.suite.coverage import ALL_CODES, ALL_INVARIANTS
from sessionlog_spec.suite.output.cases import CASE_FORMAT, MAX_CASE_BYTES
from sessionlog_spec.suite.output.replay import PROGRAM, QUOTE_LIMIT, port_arguments, replay_command, unquoted_stderr
from sessionlog_spec.suite.ports.inprocess import InProcessPort
from sessionlog_spec.suite.verdict import Verdict

QUICK = ("--profile", "dev", "--max-examples", "2", "--steps", "5", "--quiet")
REFUSING = ("--profile", "dev", "--max-examples", "6", "--steps", "20", "--quiet")
"""Long enough that the session group submits invalid candidates (a run of QUICK may submit none)."""
SURFACE_BROKEN = "surface_drops_replacements"


def _pasted(command: str) -> subprocess.CompletedProcess[str]:
    """Run a printed command through a shell, as a person pasting it would (this interpreter as ``python``)."""
    assert command.startswith(PROGRAM + " ")
    line = shlex.quote(sys.executable) + " -m sessionlog_spec" + command.removeprefix("python -m sessionlog_spec")
    return subprocess.run(["/bin/sh", "-c", line], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)


# -- output paths, checked before the port starts ----------------------------------------------------


def _read_only_directory(tmp_path: Path) -> Path:
    """A directory no file can be created in, whoever runs the test."""
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o555)
        return locked
    if sys.platform.startswith("linux") and Path("/sys").is_dir():
        return Path("/sys")  # sysfs refuses new files even to root
    pytest.skip("no directory is read-only to root here")


@pytest.mark.parametrize(
    ("option", "bad", "says"),
    [
        ("--junit", lambda tmp: tmp, "is a directory"),
        ("--report", lambda tmp: tmp / "a-file" / "deeper" / "report.json", "a-file is not a directory"),
        ("--report", lambda tmp: _read_only_directory(tmp) / "report.json", "cannot create files in"),
        ("--junit", lambda tmp: _read_only_directory(tmp) / "new" / "junit.xml", "cannot create anything in"),
        ("--cases-dir", lambda tmp: tmp / "a-file", "is a file, not a directory"),
        ("--html", lambda tmp: tmp / "a-file" / "report.html", "a-file is not a directory"),
    ],
    ids=[
        "junit-is-a-directory",
        "report-under-a-file",
        "report-read-only",
        "junit-read-only-missing",
        "cases-dir-is-a-file",
        "html-under-a-file",
    ],
)
def test_a_bad_output_path_ends_before_the_port_starts(tmp_path: Path, option: str, bad: Any, says: str) -> None:
    (tmp_path / "a-file").write_text("", encoding="utf-8")
    started = tmp_path / "driver-started"
    before = sorted(tmp_path.iterdir())
    checked = run_cli("check", "--driver", f"touch {started}", *QUICK, option, bad(tmp_path))
    assert checked.returncode == 2, checked.stdout + checked.stderr
    [line] = checked.stderr.splitlines()
    assert line.startswith(f"{option}: ") and says in line, line
    assert not started.exists(), "the port was started before the output paths were checked"
    assert sorted(tmp_path.iterdir()) == before, "the check left something behind"


def test_report_and_junit_on_the_same_file_is_a_usage_error(tmp_path: Path) -> None:
    checked = run_cli("check", "--port", "model", *QUICK, "--report", tmp_path / "out", "--junit", tmp_path / "." / "out")
    assert checked.returncode == 2
    assert checked.stderr.splitlines() == [f"--report and --junit name the same file {tmp_path / 'out'}"]


def test_missing_output_directories_are_created(tmp_path: Path) -> None:
    report, junit = tmp_path / "new" / "report.json", tmp_path / "other" / "deep" / "junit.xml"
    checked = run_cli("check", "--port", "model", *QUICK, "--only", "header", "--report", report, "--junit", junit)
    assert checked.returncode == 0, checked.stderr
    assert read_json(report)["verdict"] == "passed" and ET.parse(junit).getroot().get("tests") == "1"


# -- a port that cannot start ------------------------------------------------------------------------

CRASHING = "import sys\nsys.stderr.write('driver: cannot read config.toml\\n')\nsys.exit(1)\n"


@pytest.mark.parametrize(
    ("driver", "kind", "tail"),
    [
        (lambda tmp: "false", "exit", ""),
        (lambda tmp: f"{tmp / 'no-such-driver'}", "start", ""),
        (lambda tmp: f"{sys.executable} {tmp / 'crashing.py'}", "exit", "driver: cannot read config.toml"),
    ],
    ids=["false", "missing-program", "stderr-then-exit-1"],
)
def test_a_port_that_cannot_start_still_gets_both_reports(tmp_path: Path, driver: Any, kind: str, tail: str) -> None:
    (tmp_path / "crashing.py").write_text(CRASHING, encoding="utf-8")
    report, junit = tmp_path / "out" / "report.json", tmp_path / "out" / "junit.xml"
    command = driver(tmp_path)
    checked = run_cli("check", "--driver", command, *QUICK, "--only", "header,repair", "--report", report, "--junit", junit)
    assert checked.returncode == 1, checked.stderr
    assert checked.stderr.startswith(f"cannot start the port: port fault ({kind})"), checked.stderr
    assert tail in checked.stderr and "Traceback" not in checked.stderr
    suite = ET.parse(junit).getroot()
    assert (suite.get("tests"), suite.get("errors"), suite.get("failures")) == ("2", "2", "0")
    for case, group in zip(suite.iter("testcase"), ("header", "repair"), strict=True):
        [error] = case
        assert (case.get("name"), error.tag, error.get("type")) == (group, "error", "port-fault")
        assert f"port fault ({kind})" in (error.get("message") or "")
        assert tail in (error.text or "") and f"port: --driver {shlex.quote(command)}" in (error.text or "")
    document = read_json(report)
    assert document["verdict"] == "failed" and document["fault"]["kind"] == kind
    assert set(document["groups"]) == {"header", "repair"}
    for section in document["groups"].values():
        assert section["status"] == "error" and section["fault"]["stderr_tail"].strip() == tail


# -- every failure carries its request, both replies and a pasteable replay command --------------------


def test_junit_and_json_failures_carry_the_request_both_replies_and_a_pasteable_replay(tmp_path: Path) -> None:
    report, junit, driver = tmp_path / "report.json", tmp_path / "junit.xml", broken_driver(SURFACE_BROKEN)
    checked = run_cli(
        "check", "--driver", driver, "--profile", "dev", "--only", "surface", "--quiet", "--timeout", "7",
        "--cases-dir", tmp_path / "cases", "--database", tmp_path / "db", "--report", report, "--junit", junit,
    )  # fmt: skip
    assert checked.returncode == 1, checked.stdout + checked.stderr
    [case_file] = case_files(tmp_path / "cases")
    failing = read_json(case_file)["exchanges"][-1]
    request = {"op": failing["op"], **failing["args"]}
    replay = f"{PROGRAM} replay {shlex.quote(str(case_file))} --driver {shlex.quote(driver)} --timeout 7"

    failure = read_json(report)["groups"]["surface"]["failure"]
    assert failure["replay"] == replay
    assert failure["failing"] == {"request_number": len(read_json(case_file)["exchanges"]), "request": request,
                                  "model": failing["expected"], "port": failing["actual"]}  # fmt: skip

    [body] = [f.text or "" for f in ET.parse(junit).getroot().iter("failure")]
    lines = body.split("\n")  # a drawn text may hold U+2028, which splitlines() takes for a line end
    assert any(line.endswith(": " + json.dumps(request, ensure_ascii=False)) for line in lines), body
    assert f"model (expected): {json.dumps(failing['expected'], ensure_ascii=False, sort_keys=True)}" in lines
    assert f"port (actual): {json.dumps(failing['actual'], ensure_ascii=False, sort_keys=True)}" in lines
    assert f"replay: {replay}" in lines
    pasted = _pasted(replay)
    assert pasted.returncode == 1, pasted.stdout + pasted.stderr
    assert '+    "replacements": []' in pasted.stdout


def test_the_replay_command_names_the_port_as_it_was_given() -> None:
    assert port_arguments(None, "python") == "--port python"
    assert port_arguments(None, "model", 5.0) == "--port model"
    assert port_arguments(None, "node driver.mjs") == "--driver 'node driver.mjs'"
    assert replay_command(Path("reports/cases/a b.json"), port_arguments("node driver.mjs", None, 30)) == (
        "python -m sessionlog_spec replay 'reports/cases/a b.json' --driver 'node driver.mjs' --timeout 30"
    )


# -- replay: bad case files, whole requests ------------------------------------------------------------


def _case(**fields: Any) -> dict[str, Any]:
    return {"format": CASE_FORMAT, "case": "surface/fold_surface/wrong-result", "message": "m", **fields}


BAD_CASES: dict[str, tuple[Any, str]] = {
    "array": ([], "not a sessionlog-case/1 file: the document is a JSON array"),
    "empty-object": ({}, "not a sessionlog-case/1 file (no format)"),
    "other-format": ({"format": "sessionlog-report/1"}, 'not a sessionlog-case/1 file (format "sessionlog-report/1")'),
    "no-exchanges": (_case(), "'exchanges' is missing"),
    "empty-exchanges": (_case(exchanges=[]), "there is nothing to replay"),
    "exchange-not-object": (_case(exchanges=[["reset"]]), "exchange 1 of 1: a JSON array, not an object"),
    "unknown-op": (_case(exchanges=[{"op": "reset"}, {"op": "explode"}]), "exchange 2 of 2: not a sessionlog-driver/1 request"),
    "args-not-object": (_case(exchanges=[{"op": "append", "args": [1]}]), "'args' of append is a JSON array"),
    "args-with-op": (_case(exchanges=[{"op": "reset", "args": {"op": "bye"}}]), "may not hold 'id' or 'op'"),
    "no-message": ({"format": CASE_FORMAT, "case": "x", "exchanges": [{"op": "reset"}]}, "'message' is missing"),
}


@pytest.mark.parametrize("name", [*BAD_CASES, "not-json", "nan", "not-utf8", "too-deep", "missing", "directory", "huge"])
def test_replay_of_a_bad_case_file_is_one_line_and_status_2(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "case.json"
    says = {
        "not-json": "not JSON",
        "nan": "not JSON",
        "not-utf8": "not JSON",
        "too-deep": "not JSON",
        "missing": "No such file or directory",
        "directory": "it is a directory",
        "huge": f"over the {MAX_CASE_BYTES:,} byte limit",
    }.get(name, "")
    if name in BAD_CASES:
        document, says = BAD_CASES[name]
        path.write_text(json.dumps(document), encoding="utf-8")
    elif name == "not-json":
        path.write_text("{'format': 'sessionlog-case/1'}", encoding="utf-8")
    elif name == "nan":
        path.write_text(json.dumps(_case(exchanges=[{"op": "reset"}], seed=float("nan"))), encoding="utf-8")
    elif name == "not-utf8":
        path.write_bytes(b'{"format": "\xff"}')
    elif name == "too-deep":
        path.write_text("[" * 100_000, encoding="utf-8")
    elif name == "directory":
        path = tmp_path
    elif name == "huge":
        with path.open("wb") as sparse:
            sparse.truncate(MAX_CASE_BYTES + 1)
    assert cli.main(["replay", str(path), "--port", "model"]) == 2
    captured = capsys.readouterr()
    [line] = captured.err.splitlines()
    assert line.startswith(f"cannot replay {path}: ") and says in line, line
    assert captured.out == ""


def _long_surface_case(tmp_path: Path, text: str) -> Path:
    """A counterexample whose failing request (a fold_surface the broken driver gets wrong) holds ``text``."""
    user = {"id": "user-1", "role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}
    summary = {**user, "id": "summary-2", "content": [{"type": "text", "text": "Summary."}]}
    events = [
        {"type": "user/message", "seq": 0, "time": 1, "data": user, "surfaceOp": "append"},
        {"type": "user/message", "seq": 1, "time": 2, "data": summary,
         "surfaceOp": {"op": "replace", "start": 0, "end": 0}, "sourceEventSeqs": [0]},
    ]  # fmt: skip
    path = tmp_path / "long.json"
    path.write_text(json.dumps(_case(exchanges=[{"op": "fold_surface", "args": {"events": events}}])), encoding="utf-8")
    return path


def test_replay_prints_the_failing_request_whole_unless_asked_for_short(tmp_path: Path) -> None:
    text = "".join(f"word{i} " for i in range(QUOTE_LIMIT))  # far past the short view's limit
    path = _long_surface_case(tmp_path, text)
    whole = run_cli("replay", path, "--driver", broken_driver(SURFACE_BROKEN))
    assert whole.returncode == 1, whole.stdout + whole.stderr
    [request] = [line.removeprefix("request: ") for line in whole.stdout.splitlines() if line.startswith("request: ")]
    assert json.loads(request) == {"op": "fold_surface", **read_json(path)["exchanges"][0]["args"]}
    short = run_cli("replay", path, "--driver", broken_driver(SURFACE_BROKEN), "--short")
    assert short.returncode == 1
    [cut] = [line for line in short.stdout.splitlines() if line.startswith("request: ")]
    assert text not in cut and "more characters; replay without --short" in cut


# -- vectors run: each failure with its input, both verdicts and a command for that case alone --------


class AcceptsEveryAppend:
    """A broken port: it accepts every append without looking."""

    def __init__(self) -> None:
        self.driver = ModelDriver()

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        reply = self.driver(request)
        if request["op"] == "append" and not reply["ok"]:
            empty = {"length": 0, "nodes": [], "replace_generation": 0, "header": None}
            return {"id": request["id"], "ok": True, "result": empty}
        return reply


def test_vectors_run_prints_each_failures_input_verdicts_and_its_own_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sessionlog_spec.vectors.cli.port_for", lambda spec, timeout: InProcessPort(AcceptsEveryAppend()))
    monkeypatch.setenv("COLUMNS", "400")
    driver = "node my driver.mjs"
    assert cli.main(["vectors", "run", "--driver", driver, "--only", "trace", "--any-code"]) == 1
    out = capsys.readouterr().out
    [first] = [line.split()[1].rstrip(":") for line in out.splitlines() if line.startswith("FAIL ")][:1]
    case = next(c for c in read_json(ROOT / "spec/vectors/data/trace.json")["cases"] if c["id"] == first)
    block = out.split(f"FAIL {first}:", 1)[1].split("\nFAIL ", 1)[0]
    steps = [json.dumps(step, sort_keys=True, separators=(",", ":")) for step in case["input"]]
    for index, step in enumerate(steps):
        assert f" {index}: {step}" in block, block
    last = len(steps) - 1
    assert f"> {last}: {steps[last]}" in block
    assert f"expected at request {last}: refused with {case['expected']['code']}" in block
    assert f"actual at request {last}: accepted: " in block
    command = f"{PROGRAM} vectors run --any-code --case {first} --driver {shlex.quote(driver)}"
    assert f"re-run: {command}" in block

    argv = shlex.split(command.removeprefix(PROGRAM + " "))
    assert cli.main(argv) == 1
    again = capsys.readouterr().out
    assert [line.split()[1].rstrip(":") for line in again.splitlines() if line.startswith("FAIL ")] == [first]
    assert "1 cases" in again


def test_vectors_run_refuses_an_unknown_case_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["vectors", "run", "--port", "model", "--case", "log/no-such-case"]) == 2
    vectors = ROOT / "spec" / "vectors" / "data"
    assert capsys.readouterr().err.strip() == f"no vector with id log/no-such-case in {vectors} (after --only/--skip)"


# -- unexercised invariants and codes, by name ---------------------------------------------------------


def test_the_reports_name_every_unexercised_invariant_and_code(tmp_path: Path) -> None:
    report, junit = tmp_path / "report.json", tmp_path / "junit.xml"
    checked = run_cli("check", "--port", "model", *QUICK, "--only", "header", "--report", report, "--junit", junit)
    assert checked.returncode == 0, checked.stderr
    coverage = read_json(report)["coverage"]
    never = coverage["never_exercised"]
    assert never["invariants"] == [i for i in ALL_INVARIANTS if i not in coverage["invariants"]]
    assert never["codes"] == [c for c in ALL_CODES if c not in coverage["codes"]]
    assert "INV-COMPACT-1" in never["invariants"], "a group that did not run exercised nothing"
    properties = {p.get("name"): p.get("value") for p in ET.parse(junit).getroot().iter("property")}
    assert properties["never-exercised.invariants"] == ", ".join(never["invariants"])
    assert properties["never-exercised.codes"] == ", ".join(never["codes"])
    assert properties["never-exercised.judged"] == "false"


def test_the_verdict_lists_unexercised_invariants_then_codes() -> None:
    verdict = Verdict(False, never_invariants=["INV-LOG-1", "INV-HDR-2"], never_codes=["TURN_NUMBER"])
    assert verdict.never_exercised == ["INV-LOG-1", "INV-HDR-2", "TURN_NUMBER"]


def test_the_stderr_tail_is_shown_once() -> None:
    tail = "Traceback (most recent call last):\nImportError: no module named driver\n"
    assert unquoted_stderr(PortFault("exit", "hello (id 1): the driver exited with status 1", tail)) == tail.rstrip("\n")
    quoting = PortFault("exit", "the driver exited\n  | ImportError: no module named driver", tail)
    assert unquoted_stderr(quoting) == ""
    assert unquoted_stderr(PortFault("exit", "the driver exited", "\n")) == ""


def test_a_report_that_cannot_be_written_after_the_run_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    args = argparse.Namespace(report=tmp_path / "report.json", junit=blocker / "junit.xml", html=None)
    assert not write_outputs(args, dict, lambda: ET.ElementTree(ET.Element("testsuite")))
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"--junit: cannot write {blocker / 'junit.xml'}: "), line
    assert read_json(tmp_path / "report.json") == {}


# -- refusal codes: compared unless --any-code ---------------------------------------------------------


def test_refusal_codes_are_compared_unless_the_run_opts_out_and_then_the_outputs_say_so(tmp_path: Path) -> None:
    driver = broken_driver("codes_unmapped")
    common = ("check", "--driver", driver, *REFUSING, "--only", "session", "--seed", "1", "--cases-dir", tmp_path / "cases")
    strict = run_cli(*common, "--report", tmp_path / "strict.json")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert read_json(tmp_path / "strict.json")["strict_codes"] is True
    assert read_json(tmp_path / "strict.json")["groups"]["session"]["failure"]["kind"] == "wrong-code"

    loose = run_cli(*common, "--any-code", "--report", tmp_path / "loose.json", "--junit", tmp_path / "loose.xml")
    assert loose.returncode == 0, loose.stdout + loose.stderr
    assert read_json(tmp_path / "loose.json")["strict_codes"] is False
    assert "refusal codes were not compared (--any-code)" in loose.stdout
    properties = {p.get("name"): p.get("value") for p in ET.parse(tmp_path / "loose.xml").getroot().iter("property")}
    assert properties["codes-compared"] == "false (--any-code)"


def test_a_replay_follows_the_case_files_code_rule_unless_told_otherwise(tmp_path: Path) -> None:
    driver = broken_driver("codes_unmapped")
    checked = run_cli("check", "--driver", driver, *REFUSING, "--only", "session", "--seed", "1", "--cases-dir", tmp_path)
    assert checked.returncode == 1, checked.stdout + checked.stderr
    case_file = case_files(tmp_path)[0]
    assert read_json(case_file)["strict_codes"] is True
    assert run_cli("replay", case_file, "--driver", driver).returncode == 1
    assert run_cli("replay", case_file, "--driver", driver, "--any-code").returncode == 0
