"""The suite as an implementer installs it: a wheel in a fresh environment, outside this checkout.

One module-scoped environment is built from the two wheels this checkout makes (the suite, and
seqlog as ``sessionlog-seqlog``); every test then runs the installed commands from a folder that
is not the checkout, so nothing can come from the source tree by accident.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from sessionlog_spec.suite.groups import SUITE_GROUPS

CHECKOUT = Path(__file__).resolve().parents[2]
VECTORS = CHECKOUT / "spec" / "vectors" / "data"
SMALL_VECTORS = ("log", "surface", "trace", "header", "repair", "compaction", "jsonl", "legacy")
"""Every vector file but ``large`` (its 100k-event log takes minutes through a subprocess driver)."""


@dataclass(frozen=True)
class Installed:
    """A fresh environment with the suite installed from its wheel, and a folder outside the checkout."""

    python: Path
    bin: Path
    work: Path

    def run(self, *argv: str | Path, cwd: Path | None = None, check: bool = False) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTEST_ADDOPTS")}
        env["PATH"] = f"{self.bin}{os.pathsep}{env.get('PATH', '')}"
        done = subprocess.run(
            [str(a) for a in argv], cwd=cwd or self.work, env=env, capture_output=True, text=True, timeout=600, check=False
        )
        if check and done.returncode != 0:
            raise AssertionError(f"{argv} exited {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
        return done

    @property
    def driver(self) -> str:
        """The model's own driver, as the installed package runs it."""
        return f"{self.python} -m sessionlog_spec.protocol.model_driver"


def source_copy(source: Path) -> Path:
    """What the two distributions are built from, copied to ``source``: the package folders, the
    project files and seqlog's own folder (no build/, no caches)."""
    ignore = shutil.ignore_patterns("__pycache__", "build", "*.egg-info")
    for name in ("spec", "model"):
        shutil.copytree(CHECKOUT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(CHECKOUT / name, source / name)
    shutil.copytree(CHECKOUT / "ports" / "python", source / "ports" / "python", ignore=ignore)
    return source


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    root = tmp_path_factory.mktemp("installed")
    dist = root / "dist"
    # Built from a copy: setuptools builds in the source tree's build/, and two test workers building
    # the checkout at once collide there ("File exists: build/bdist.../sessionlog_spec-0.1.0.dist-info").
    source = source_copy(root / "source")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", dist, source, source / "ports/python"],
        check=True,
        cwd=root,
        capture_output=True,
    )
    (wheel,) = dist.glob("sessionlog_spec-*.whl")
    venv.create(root / "env", with_pip=True)
    bin_dir = root / "env" / "bin"
    python = bin_dir / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "--find-links", str(dist), f"{wheel}[python-port]", "pytest"],
        check=True,
        cwd=root,
        capture_output=True,
    )
    work = root / "work"
    work.mkdir()
    yield Installed(python, bin_dir, work)


def test_the_wheel_installs_one_import_package_and_no_generic_name(installed: Installed) -> None:
    probe = (
        "import importlib.metadata as m, json; "
        "files = m.distribution('sessionlog-spec').files; "
        "print(json.dumps(sorted({f.parts[0] for f in files if f.suffix == '.py'})))"
    )
    tops = json.loads(installed.run(installed.python, "-c", probe, check=True).stdout)
    assert tops == ["sessionlog_spec"]
    imports = "import sessionlog_spec, seqlog; print(sessionlog_spec.__file__, seqlog.__file__)"
    located = installed.run(installed.python, "-c", imports)
    # Both come from the environment, not from this checkout.
    assert located.returncode == 0, located.stderr
    assert str(CHECKOUT) not in located.stdout


def test_check_against_a_driver_passes_from_outside_the_checkout(installed: Installed) -> None:
    # Every group, a few examples each: what is checked here is that an installed suite runs, not the port.
    options = ("--profile", "dev", "--max-examples", "6", "--quiet")
    done = installed.run(installed.bin / "sessionlog-check", "check", "--driver", installed.driver, *options)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "PASSED" in done.stdout


def test_check_without_a_port_fails_and_says_what_to_give(installed: Installed) -> None:
    done = installed.run(installed.bin / "sessionlog-check", "--profile", "dev")
    assert done.returncode != 0
    assert "--driver" in done.stderr and "PASSED" not in done.stdout


def test_the_python_port_extra_checks_seqlog(installed: Installed) -> None:
    check = installed.bin / "sessionlog-check"
    done = installed.run(check, "check", "--port", "python", "--profile", "dev", "--only", "session", "--quiet")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def test_vectors_run_finds_every_shipped_case(installed: Installed) -> None:
    expected = sum(len(json.loads((VECTORS / f"{stem}.json").read_text(encoding="utf-8"))["cases"]) for stem in SMALL_VECTORS)
    done = installed.run(
        installed.bin / "sessionlog-check", "vectors", "run", "--driver", installed.driver, "--only", ",".join(SMALL_VECTORS)
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    passed = installed.run(
        installed.python, "-c",
        "import json, sys; from sessionlog_spec.vectors.format import load_all; "
        f"print(sum(len(d['cases']) for s, d in load_all().items() if s in {list(SMALL_VECTORS)!r}))",
        check=True,
    )
    assert int(passed.stdout) == expected > 0


def test_vectors_run_with_no_cases_fails(installed: Installed) -> None:
    empty = installed.work / "no-vectors"
    empty.mkdir(exist_ok=True)
    done = installed.run(installed.bin / "sessionlog-check", "vectors", "run", "--driver", installed.driver, "--dir", empty)
    assert done.returncode != 0
    assert "no vectors" in done.stderr


def test_check_log_reads_a_vector_log(installed: Installed) -> None:
    cases = json.loads((VECTORS / "jsonl.json").read_text(encoding="utf-8"))["cases"]
    texts = [
        step["jsonl"]
        for case in cases
        if case["expected"]["ok"]
        for step in case["input"]
        if step.get("op") == "load" and isinstance(step.get("jsonl"), str)
    ]
    assert texts, "the jsonl vectors hold a log that loads"
    log = installed.work / "vector.jsonl"
    log.write_text(texts[0], encoding="utf-8")
    done = installed.run(installed.bin / "sessionlog-check", "check-log", log)
    assert done.returncode == 0, done.stdout + done.stderr


def test_catalogue_outside_a_checkout_fails_and_names_the_installed_copy(installed: Installed) -> None:
    done = installed.run(installed.bin / "sessionlog-check", "catalogue")
    assert done.returncode == 2
    assert "invariants.md" in done.stderr
    assert not (installed.work / "invariants.md").exists()


SCRATCH_TEST = '''
import model
import spec


def test_own_packages() -> None:
    assert model.OWN == "model" and spec.OWN == "spec"
'''


def scratch_project(root: Path) -> Path:
    """A user's project with packages of its own called ``model`` and ``spec``."""
    project = root / "scratch"
    for name in ("model", "spec"):
        (project / name).mkdir(parents=True, exist_ok=True)
        (project / name / "__init__.py").write_text(f"OWN = {name!r}\n", encoding="utf-8")
    (project / "tests").mkdir(exist_ok=True)
    (project / "tests" / "test_own.py").write_text(SCRATCH_TEST, encoding="utf-8")
    (project / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n', encoding="utf-8")
    return project


def test_the_pytest_plugin_leaves_a_project_with_its_own_model_and_spec_alone(installed: Installed) -> None:
    project = scratch_project(installed.work)
    unused = installed.run(installed.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project)
    assert unused.returncode == 0, unused.stdout + unused.stderr
    assert "1 passed" in unused.stdout
    used = installed.run(
        installed.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
        f"--sessionlog-driver={installed.driver}", "--sessionlog-profile=dev", "--sessionlog-max-examples=5",
        cwd=project,
    )
    assert used.returncode == 0, used.stdout[-3000:] + used.stderr[-3000:]
    assert f"{1 + len(SUITE_GROUPS)} passed" in used.stdout  # the project's own test and one per capability group


def test_the_package_list_names_every_package_folder() -> None:
    config = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    folders = {"sessionlog_spec": CHECKOUT / "spec", "sessionlog_spec.model": CHECKOUT / "model"}
    found = {"sessionlog_spec.vectors.data", "sessionlog_spec.vectors.schemas", "sessionlog_spec.vectors.upstream"}  # data only
    for name, folder in folders.items():
        for init in folder.rglob("__init__.py"):
            found.add(".".join((name, *init.parent.relative_to(folder).parts)))
    assert set(config["packages"]) == found


def test_the_lowest_setuptools_the_build_allows_builds_the_wheel(tmp_path: Path) -> None:
    """The ``[build-system]`` floor reads ``license = "MIT"`` with ``license-files`` (PEP 639) and builds the wheel."""
    requires = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))["build-system"]["requires"]
    [floor] = [requirement.removeprefix("setuptools>=") for requirement in requires if requirement.startswith("setuptools")]
    source = source_copy(tmp_path / "source")
    venv.create(tmp_path / "env", with_pip=True)
    python = tmp_path / "env" / "bin" / "python"
    pip = [str(python), "-m", "pip", "--disable-pip-version-check", "--quiet"]
    subprocess.run([*pip, "install", f"setuptools=={floor}", "wheel"], check=True, capture_output=True, cwd=tmp_path)
    built = subprocess.run(
        [*pip, "wheel", "--no-build-isolation", "--no-deps", "-w", str(tmp_path / "dist"), str(source)],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert built.returncode == 0, f"setuptools {floor} cannot build the wheel:\n{built.stderr[-3000:]}"
    [wheel] = (tmp_path / "dist").glob("sessionlog_spec-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        [metadata] = [name for name in archive.namelist() if name.endswith(".dist-info/METADATA")]
        assert "License-Expression: MIT" in archive.read(metadata).decode().splitlines()
