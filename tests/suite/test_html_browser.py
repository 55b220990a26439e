"""What a person sees of ``--html`` pages in a real browser (headless Chromium, driven by Playwright).

The pages are those of two real runs of the surface group (the model's driver, which passes, and a
deliberately broken driver, which fails) and of their comparison through ``html``: the matrix renders
with every cell's state, a failure opens when its summary is clicked and then shows the request, both
replies and the replay command, and no page fetches anything or runs a script, even one a report holds.

Debian's ``chromium`` is used as it is (Playwright never downloads a browser here); without it the
tests are skipped.  ``.ci/run`` installs it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conformance_helpers import MODEL_DRIVER, ROOT, broken_driver, read_json, run_cli

from sessionlog_spec.suite.output.html import render_page, write_html

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium installed: apt-get install chromium (.ci/run installs it before make test)"
)
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Chromium's flags: no sandbox (CI runs as root), and none of its background connections, which a closed network refuses."""
RUN = ("--profile", "dev", "--only", "surface", "--quiet", "--seed", "1", "--steps", "20", "--shrink-seconds", "1")
"""A short run of one group: the broken driver's failure is found within the first examples."""
HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"


@dataclass(frozen=True)
class Pages:
    """The pages under test, and the reports they were rendered from."""

    passing: Path
    failing: Path
    comparison: Path
    passing_report: dict[str, Any]
    failing_report: dict[str, Any]


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Pages:
    """Both runs at once (one per core), each writing its JSON report and its page; then the comparison."""
    root = tmp_path_factory.mktemp("pages")
    runs = {}
    for name, driver in (("passing", MODEL_DRIVER), ("failing", broken_driver("surface_drops_replacements"))):
        command = [sys.executable, "-m", "sessionlog_spec", "check", "--driver", driver, *RUN, "--cases-dir", root / name,
                   "--report", root / f"{name}.json", "--html", root / f"{name}.html"]  # fmt: skip
        runs[name] = subprocess.Popen([str(a) for a in command], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    for name, expected in (("passing", 0), ("failing", 1)):
        output, _ = runs[name].communicate(timeout=240)
        assert runs[name].returncode == expected, output.decode()
    comparison = root / "comparison.html"
    rendered = run_cli("html", comparison, root / "passing.json", root / "failing.json")
    assert rendered.returncode == 0, rendered.stderr
    return Pages(
        root / "passing.html",
        root / "failing.html",
        comparison,
        read_json(root / "passing.json"),
        read_json(root / "failing.json"),
    )


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - only once Chromium is known to be there

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        yield launched
        launched.close()


@dataclass
class Opened:
    """A page open in the browser, with every URL it asked for and every error it logged."""

    page: Any
    requested: list[str]
    errors: list[str]


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    contexts = []

    def opened(path: Path) -> Opened:
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        contexts.append(context)
        page = context.new_page()
        requested: list[str] = []
        errors: list[str] = []
        page.on("request", lambda request: requested.append(request.url))
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.goto(path.as_uri())
        return Opened(page, requested, errors)

    yield opened
    for context in contexts:
        context.close()


def _background(cell: Any) -> str:
    return str(cell.evaluate("element => getComputedStyle(element).backgroundColor"))


def test_the_matrix_of_a_passing_run_shows_every_exercised_invariant_passed(pages: Pages, open_page: Any) -> None:
    opened = open_page(pages.passing)
    page = opened.page
    assert page.locator("#verdict").inner_text() == "passed"
    assert page.locator("table.invariants").is_visible()
    cells = page.locator("table.invariants td.cell")
    exercised = sorted(i for i, n in pages.passing_report["groups"]["surface"]["invariants"].items() if n)
    assert cells.count() == len(exercised) > 0
    shown = sorted(page.locator("table.invariants tr[data-invariant]").evaluate_all("rows => rows.map(r => r.dataset.invariant)"))
    assert shown == exercised
    for index in range(cells.count()):
        cell = cells.nth(index)
        assert cell.is_visible() and cell.get_attribute("data-state") == "passed"
        assert cell.inner_text().startswith("✓")
    assert page.locator("details.failure").count() == 0
    assert opened.requested == [pages.passing.as_uri()] and not opened.errors


def test_a_failure_opens_on_a_click_and_shows_the_request_both_replies_and_the_replay_command(
    pages: Pages, open_page: Any
) -> None:
    opened = open_page(pages.failing)
    page = opened.page
    assert page.locator("#verdict").inner_text() == "failed"
    [failure] = pages.failing_report["groups"]["surface"]["failures"]
    for invariant in failure["invariants"]:
        cell = page.locator(f"table.invariants tr[data-invariant='{invariant}'] td.cell")
        assert cell.is_visible() and cell.get_attribute("data-state") == "failed" and cell.inner_text().startswith("✗")
    passed = page.locator("table.invariants td.cell[data-state='passed']").first
    failed = page.locator("table.invariants td.cell[data-state='failed']").first
    assert passed.is_visible() and _background(passed) != _background(failed), "failed and passed cells look alike"

    item = page.locator("details.failure").first
    request = item.locator("pre.request")
    assert item.locator("summary").is_visible() and failure["message"] in item.locator("summary").inner_text()
    assert not request.is_visible(), "a failure starts folded"
    item.locator("summary").click()
    assert request.is_visible()
    assert json.loads(request.inner_text()) == failure["failing"]["request"]
    assert json.loads(item.locator("pre.model").inner_text()) == failure["failing"]["model"]
    assert json.loads(item.locator("pre.port").inner_text()) == failure["failing"]["port"]
    replay = item.locator("pre.replay code")
    assert replay.is_visible() and replay.inner_text() == failure["replay"]
    assert failure["replay"].startswith("python -m sessionlog_spec replay ")
    item.locator("summary").click()
    assert not request.is_visible(), "a second click folds it again"
    assert opened.requested == [pages.failing.as_uri()] and not opened.errors


def test_the_comparison_names_both_ports_and_shows_each_ones_outcome(pages: Pages, open_page: Any) -> None:
    opened = open_page(pages.comparison)
    page = opened.page
    arguments = [pages.passing_report["port"]["arguments"], pages.failing_report["port"]["arguments"]]
    headers = page.locator("table.invariants thead th.port")
    assert [headers.nth(i).locator(".port-arguments").inner_text() for i in range(headers.count())] == arguments
    row = page.locator("table.groups-by-port tr[data-group='surface'] td.cell")
    assert [row.nth(i).inner_text() for i in range(row.count())] == ["✓ passed", "✗ failed"]
    [failure] = pages.failing_report["groups"]["surface"]["failures"]
    for invariant in failure["invariants"]:
        cells = page.locator(f"table.invariants tr[data-invariant='{invariant}'] td.cell")
        assert [cells.nth(i).get_attribute("data-state") for i in range(2)] == ["passed", "failed"]
        assert page.locator(f"table.invariants tr[data-invariant='{invariant}'] .differs-mark").is_visible()
    item = page.locator("details.failure")
    assert item.count() == 1
    item.locator("summary").click()
    assert item.locator("pre.replay code").inner_text() == failure["replay"]
    assert opened.requested == [pages.comparison.as_uri()] and not opened.errors


def test_a_script_in_a_report_is_shown_as_text_and_never_runs(pages: Pages, open_page: Any, tmp_path: Path) -> None:
    document = json.loads(json.dumps(pages.failing_report))
    [failure] = document["groups"]["surface"]["failures"]
    failure["failing"]["request"]["note"] = HOSTILE
    failure["message"] = HOSTILE
    document["port"]["name"] = HOSTILE
    hostile = tmp_path / "hostile.html"
    write_html(hostile, render_page([document]))
    opened = open_page(hostile)
    page = opened.page
    assert page.title() != "pwned" and page.locator("img").count() == 0
    assert HOSTILE in page.locator("h1").inner_text()
    item = page.locator("details.failure").first
    assert HOSTILE in item.locator("summary").inner_text()
    item.locator("summary").click()
    assert json.loads(item.locator("pre.request").inner_text())["note"] == HOSTILE
    assert page.title() != "pwned"
    assert opened.requested == [hostile.as_uri()]
