"""Every hostile driver gets a clear answer, in bounded time, and leaves no process behind.

The drivers in ``bad_drivers/`` record the pid and start time of themselves and of every process
they start in the file named by ``BAD_DRIVER_PIDS``.  After the port is closed (or restarted) each of
them must be gone: not running, and not a zombie waiting to be collected.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from conformance_helpers import run_cli

from sessionlog_spec.protocol.messages import Ok, PortFault
from sessionlog_spec.suite.ports import subprocess as subprocess_port
from sessionlog_spec.suite.ports.subprocess import STDERR_TAIL_BYTES, SubprocessPort

DRIVERS = Path(__file__).parent / "bad_drivers"
TIMEOUT = 1.0
BOUND = TIMEOUT + 4.0
"""Seconds a whole row may take: start, the faulting request, killing everything and closing."""
LINUX = sys.platform == "linux"
NOT_ON_LINUX = pytest.mark.skipif(not LINUX, reason="a descendant in a session of its own is found through /proc")


def bad(name: str, *args: str) -> list[str]:
    """The command line of a bad driver."""
    return [sys.executable, str(DRIVERS / f"{name}.py"), *args]


@pytest.fixture
def pid_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The file the bad drivers record their processes in (the port passes the environment on)."""
    path = tmp_path / "pids"
    monkeypatch.setenv("BAD_DRIVER_PIDS", str(path))
    return path


def recorded(path: Path) -> list[tuple[int, int]]:
    """The (pid, start time) pairs the drivers recorded."""
    if not path.exists():
        return []
    return [(int(pid), int(started)) for pid, started in (line.split() for line in path.read_text().splitlines())]


def start_time(pid: int) -> int:
    """A process's start time from ``/proc`` (0 where there is none)."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
        return int(data[data.rindex(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return 0


def still_there(pid: int, started: int) -> bool:
    """Whether the recorded process exists, running or as a zombie (a reused pid does not count)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not (LINUX and start_time(pid) != started)


def survivors(path: Path) -> list[int]:
    """The recorded processes that still exist, killed and collected here so that a failing test leaves none."""
    alive = [pid for pid, started in recorded(path) if still_there(pid, started)]
    for pid in alive:
        os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 2
    for pid in alive:
        while time.monotonic() < deadline:
            try:
                if os.waitpid(pid, os.WNOHANG) != (0, 0):
                    break
            except ChildProcessError:
                break
            time.sleep(0.01)
    return alive


@dataclass(frozen=True)
class Row:
    """One hostile driver and the answer it must get."""

    driver: tuple[str, ...]
    kind: str
    detail: str
    """Part of the fault's detail."""
    stderr: str
    """Part of the fault's stderr tail."""
    processes: int
    """How many processes the driver records: itself and those it starts."""
    options: dict[str, Any] = field(default_factory=dict)


MATRIX = [
    pytest.param(Row(("slow",), "timeout", "timed out after 1 s", "slow: thinking it over", 1), id="slow"),
    pytest.param(Row(("hang",), "timeout", "waiting for the reply", "hang: going quiet now", 1), id="silent"),
    pytest.param(Row(("exit_midrun",), "exit", "exited with status 3", "exit_midrun: giving up", 1), id="exiting"),
    pytest.param(
        Row(("oversize",), "oversize", "exceeds the limit", "oversize: here comes", 1, {"max_reply_bytes": 1 << 20}),
        id="oversize",
    ),
    pytest.param(Row(("flood",), "timeout", "waiting for the reply", "flood: ~~~", 1), id="stderr-flood"),
    pytest.param(
        Row(("flood", "state", "then-exit"), "exit", "exited with status 7", "flood: my last words\n", 1, {"timeout": 30.0}),
        id="stderr-flood-then-exit",
    ),
    pytest.param(Row(("wrong_id",), "wrong-id", "carries id 103", "wrong_id: replying to the wrong", 1), id="wrong-id"),
    pytest.param(Row(("not_object",), "schema", "is not of type 'object'", "not_object: replying", 1), id="non-object"),
    pytest.param(
        Row(("closed_stdout",), "exit", "closed its stdout but did not exit", "closed_stdout: hanging up", 1),
        id="closed-stdout",
    ),
    pytest.param(
        Row(("escaping_child", "state", "hang"), "timeout", "waiting for the reply", "escaping_child: a process of mine", 2),
        id="escaping-child",
        marks=NOT_ON_LINUX,
    ),
    pytest.param(
        Row(
            ("escaping_child", "state", "exit"),
            "exit",
            "exited with status 5 (a process it started still holds its stdout)",
            "escaping_child: a process of mine",
            2,
            {"timeout": 30.0},
        ),
        id="escaping-child-then-exit",
        marks=NOT_ON_LINUX,
    ),
    pytest.param(
        Row(
            ("orphan_child",),
            "exit",
            "exited with status 4 (a process it started still holds its stdout) before replying",
            "orphan_child: leaving my child behind",
            2,
            {"timeout": 30.0},
        ),
        id="child-holds-pipes",
    ),
]


@pytest.mark.parametrize("row", MATRIX)
def test_a_hostile_driver_gets_its_fault_in_bounded_time_and_leaves_no_process(pid_file: Path, row: Row) -> None:
    started = time.monotonic()
    port = SubprocessPort(bad(*row.driver), **{"timeout": TIMEOUT, **row.options})
    try:
        assert port.call("reset") == Ok(None)
        with pytest.raises(PortFault) as info:
            port.call("state")
    finally:
        port.close()
    elapsed = time.monotonic() - started
    fault = info.value
    assert (fault.kind, row.detail in fault.detail, row.stderr in fault.stderr_tail) == (row.kind, True, True), fault
    assert len(fault.stderr_tail.encode()) <= STDERR_TAIL_BYTES
    # A driver that exits is an exit fault at once, not after the (long) timeout its child's pipes would cause.
    assert elapsed < BOUND
    assert len(recorded(pid_file)) == row.processes
    assert survivors(pid_file) == []


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        pytest.param("import", "No module named 'sessionlog_driver_dependency_that_is_not_installed'", id="missing-import"),
        pytest.param("before", "dies_at_start: the configuration file is missing", id="exits-before-hello"),
    ],
)
def test_a_driver_that_dies_at_start_up_says_why_in_the_fault(pid_file: Path, mode: str, says: str) -> None:
    started = time.monotonic()
    with pytest.raises(PortFault) as info:
        SubprocessPort(bad("dies_at_start", mode), timeout=30.0)
    assert time.monotonic() - started < BOUND
    fault = info.value
    assert fault.kind == "exit"
    assert "hello (id 1): the driver exited with status 1" in fault.detail
    assert says in fault.stderr_tail
    # The message alone, which is all a report of a port that cannot start shows, carries the tail.
    assert "the driver's stderr ends with:" in str(fault)
    assert says in str(fault)
    assert survivors(pid_file) == []


def test_the_fault_waits_for_the_stderr_the_driver_wrote_before_it_exited(
    pid_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A drain that lags behind: the fault must still carry the driver's last line.
    read = subprocess_port._read_or_empty

    def lagging(fd: int) -> bytes:
        time.sleep(0.2)
        return read(fd)

    monkeypatch.setattr(subprocess_port, "_read_or_empty", lagging)
    with pytest.raises(PortFault) as info:
        SubprocessPort(bad("dies_at_start", "before"), timeout=30.0)
    assert info.value.kind == "exit"
    assert info.value.stderr_tail == "dies_at_start: the configuration file is missing\n"
    assert survivors(pid_file) == []


def test_a_driver_at_a_wrong_path_says_why_in_the_fault() -> None:
    with pytest.raises(PortFault) as info:
        SubprocessPort([sys.executable, str(DRIVERS / "no_such_driver.py")], timeout=30.0)
    assert info.value.kind == "exit"
    assert "no_such_driver.py" in str(info.value)
    assert "No such file or directory" in str(info.value)


def test_a_driver_that_dies_right_after_hello_is_an_exit_fault_with_its_stderr(pid_file: Path) -> None:
    port = SubprocessPort(bad("dies_at_start", "after"), timeout=30.0)
    try:
        started = time.monotonic()
        with pytest.raises(PortFault) as info:
            port.call("reset")
        assert time.monotonic() - started < BOUND
    finally:
        port.close()
    assert info.value.kind == "exit"
    assert "exited with status 1" in info.value.detail
    assert "dies_at_start: lost the database right after hello" in info.value.stderr_tail
    assert survivors(pid_file) == []


def test_the_check_command_shows_once_why_a_driver_could_not_start() -> None:
    checked = run_cli("check", "--driver", f"{sys.executable} {DRIVERS / 'dies_at_start.py'} import", "--profile", "dev")
    assert checked.returncode == 1
    output = checked.stdout + checked.stderr
    assert output.count("No module named 'sessionlog_driver_dependency_that_is_not_installed'") == 1, output


@NOT_ON_LINUX
def test_restart_ends_every_process_of_the_old_driver(pid_file: Path) -> None:
    port = SubprocessPort(bad("leaves_daemon", "none"), timeout=5.0)
    try:
        assert port.call("reset") == Ok(None)
        old = recorded(pid_file)
        assert len(old) == 2
        pid_file.unlink()
        port.restart()
        assert port.call("reset") == Ok(None)
        assert [pid for pid, started in old if still_there(pid, started)] == []
    finally:
        port.close()
        survivors(pid_file)


@NOT_ON_LINUX
def test_close_ends_what_a_well_behaved_driver_left_behind(pid_file: Path) -> None:
    port = SubprocessPort(bad("leaves_daemon", "none"), timeout=5.0)
    assert port.call("reset") == Ok(None)
    driver = port.pid
    started = time.monotonic()
    port.close()
    assert time.monotonic() - started < BOUND
    assert len(recorded(pid_file)) == 2
    assert driver in {pid for pid, _ in recorded(pid_file)}
    assert survivors(pid_file) == []


@pytest.fixture
def bystanders(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """A child of this process and, once a port is open, an orphan re-parented here, neither of them a driver's."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
    orphan_pids = tmp_path / "bystander-pids"
    yield child, orphan_pids
    child.kill()
    child.wait()
    survivors(orphan_pids)


@NOT_ON_LINUX
def test_closing_a_port_leaves_the_other_processes_of_this_process_alone(
    pid_file: Path, bystanders: tuple[subprocess.Popen[bytes], Path]
) -> None:
    child, orphan_pids = bystanders
    port = SubprocessPort(bad("escaping_child", "state", "hang"), timeout=TIMEOUT)
    try:
        # While the port is open this process collects orphans; this one is not the driver's.
        subprocess.run(
            [sys.executable, str(DRIVERS / "escaping_child.py"), "--spawn-only"],
            env={**os.environ, "BAD_DRIVER_PIDS": str(orphan_pids)},
            check=True,
            timeout=30,
        )
        [(orphan, orphan_started)] = recorded(orphan_pids)
        with pytest.raises(PortFault):
            port.call("state")
    finally:
        port.close()
    assert survivors(pid_file) == []
    assert child.poll() is None, "the port must neither kill nor collect a child it did not start"
    assert still_there(orphan, orphan_started)
    assert Path(f"/proc/{orphan}/stat").read_text().split(") ")[1][0] != "Z"
