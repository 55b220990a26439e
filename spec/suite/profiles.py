"""The search profiles, in one place: the conformance suite's and the property tests'.

``dev`` is a quick smoke run, ``ci`` is what every pull request runs (the whole suite against the
model and the Python port in a few minutes on two cores), ``nightly`` is the deep search.  The
property tests under ``tests/`` take their example budget from the same profile
(``HYPOTHESIS_PROFILE=ci|dev|nightly``, ``property_examples``).  The
example database is a directory shared across runs, so a counterexample found once is tried first
the next time; ``--seed`` turns it off because a replayed database entry would make the run depend
on more than the seed.  It lives in the user's cache (:func:`cache_home`), not in the working
directory, unless ``--database`` or ``$SESSIONLOG_DATABASE`` names a place; ``check`` puts
Hypothesis's own files there too (:func:`keep_hypothesis_files_in_the_cache`).  Machines that share
counterexamples name one place: a directory on a shared filesystem, or a Redis server
(``redis://host:port/db``, with the ``[redis]`` extra).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from hypothesis import HealthCheck, Phase, Verbosity, reporting, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import DirectoryBasedExampleDatabase, ExampleDatabase
from hypothesis.internal.conjecture import engine

DATABASE_ENV = "SESSIONLOG_DATABASE"
"""Environment variable naming the example database directory (``--database`` wins over it)."""
HYPOTHESIS_STORAGE_ENV = "HYPOTHESIS_STORAGE_DIRECTORY"
"""Hypothesis's own variable for where it keeps its files; ``check`` leaves it in force when it is set."""


def cache_home() -> Path:
    """Where the suite keeps its files by default: ``$XDG_CACHE_HOME/sessionlog-spec``, else
    ``~/.cache/sessionlog-spec``, else (no home directory) a folder of the user's in the temporary directory."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    if os.path.isabs(base):  # the XDG rule: a relative value is ignored
        return Path(base) / "sessionlog-spec"
    try:
        return Path.home() / ".cache" / "sessionlog-spec"
    except RuntimeError:
        return Path(tempfile.gettempdir()) / f"sessionlog-spec-{os.getuid()}"


def default_database() -> Path:
    """The example database's directory when neither ``--database`` nor ``$SESSIONLOG_DATABASE`` names one."""
    return cache_home() / "examples"


def keep_hypothesis_files_in_the_cache() -> None:
    """Have Hypothesis keep its own files (a cache of the constants in the code it runs, Unicode tables)
    under :func:`cache_home` instead of ``./.hypothesis``, unless ``$HYPOTHESIS_STORAGE_DIRECTORY`` says where."""
    if not os.environ.get(HYPOTHESIS_STORAGE_ENV):
        set_hypothesis_home_dir(cache_home() / "hypothesis")


@dataclass(frozen=True, slots=True)
class Profile:
    """How hard one run searches: examples per group and steps per example."""

    name: str
    max_examples: int
    step_count: int
    require_full_coverage: bool
    """Whether a run fails when an observable invariant or code was never exercised."""
    property_examples: int
    """Examples per property test of the repository's own tests (``tests/strategies.py``'s ``property_settings``)."""
    targeting: bool = False
    """Whether to spend time hill-climbing towards examples that exercise more invariants."""
    shrink_seconds: int = 120
    """How long Hypothesis may spend shrinking one failure (its own default is 300 s); the
    transcript minimiser then has half that time.  ``ci`` takes 10 s, so a broken port hears of
    it within about a quarter of a minute (the minimiser, which drops whole requests, does most of
    the cutting of a long transcript); what was not shrunk by then is said on the counterexample,
    and ``nightly`` (or ``--shrink-seconds``) shrinks for longer."""


PROFILES: dict[str, Profile] = {
    "dev": Profile(
        "dev", max_examples=12, step_count=30, require_full_coverage=False, property_examples=300, shrink_seconds=30
    ),
    # Every example is new (fresh_examples): 70 of them took 144 s against seqlog in-process on idle
    # cores on 2026-12-06, where 100 examples had taken 172 s (most of them copies: in a header group
    # run, 82 of 106 copied parts of the other 24).  With one state check per fault step instead of
    # one per candidate, 70 took 137 s; 80 kept within three minutes.  Messages drawn along their
    # shapes ask for more tool calls, so sessions are longer (a fifth more events a read): on one
    # machine 80 examples took 173.6 s before and 191.6 s after (75: 189.6 s); 70 keep within three minutes.
    "ci": Profile("ci", max_examples=70, step_count=40, require_full_coverage=False, property_examples=50, shrink_seconds=10),
    "nightly": Profile(
        "nightly",
        # 250 examples took 21 min 22 s against seqlog in-process on 2026-12-05 (the read group alone
        # 5 min 32 s), over the twenty minutes a nightly job has on two cores; 200 leave room for the
        # reach census, which runs on the other core meanwhile, and the cell sweep (docs/strength.md).
        # Every example is new now (fresh_examples) and costs more than the copies most of the 200 were:
        # 140, cut in the proportion ci's 100 were cut to 70.  140 took 21 min 24 s on idle cores on
        # 2026-12-06 (1,283 s in the groups, jsonl 322 s, session 243 s): 120.  With messages drawn
        # along their shapes, 120 took 20 min 2 s on a slower machine (session 368 s, read 232 s,
        # jsonl 228 s): 100.
        max_examples=100,
        step_count=80,
        require_full_coverage=True,
        property_examples=2000,
        targeting=True,
        shrink_seconds=300,
    ),
}

# Subprocess drivers vary in speed and the machines generate whole sessions: timing health checks
# would fail a slow-but-correct port, which is not what the suite judges.
SUPPRESSED = (HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much, HealthCheck.large_base_example)


REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
"""How a ``--database`` value names a Redis server instead of a directory (the forms of ``redis.Redis.from_url``)."""
REDIS_CONNECT_SECONDS = 10.0
"""How long ``check`` waits for a Redis server to answer before it gives up (bad usage, before the port starts)."""


class DatabaseError(Exception):
    """The example database named cannot be used; the message says why in one line."""


def database_for(location: str | os.PathLike[str] | None) -> ExampleDatabase:
    """The shared example database at ``location`` (or ``$SESSIONLOG_DATABASE``, or :func:`default_database`):
    a Redis server when it is a ``redis://``, ``rediss://`` or ``unix://`` URL, else a directory."""
    where = location or os.environ.get(DATABASE_ENV) or default_database()
    if isinstance(where, str) and where.startswith(REDIS_SCHEMES):
        return redis_database(where)
    return DirectoryBasedExampleDatabase(Path(where))


def redis_database(url: str) -> ExampleDatabase:
    """Hypothesis's Redis example database on the server ``url`` names, once it has answered a ``PING``.

    Raises :class:`DatabaseError` when the ``redis`` package is missing, the URL is malformed or the server does not answer.
    """
    try:
        import redis  # noqa: PLC0415 - the [redis] extra: imported only when a URL asks for it
        from hypothesis.extra.redis import RedisExampleDatabase  # noqa: PLC0415 - needs redis
    except ImportError:
        raise DatabaseError(
            "a Redis example database needs the redis package: pip install 'sessionlog-spec[redis]'"
        ) from None
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=REDIS_CONNECT_SECONDS, socket_timeout=REDIS_CONNECT_SECONDS)
    except ValueError as error:
        raise DatabaseError(f"not a Redis URL: {error}") from None
    try:
        client.ping()
    except redis.RedisError as error:
        where = client.connection_pool.connection_kwargs
        server = where.get("path") or f"{where.get('host', 'localhost')}:{where.get('port', 6379)}"
        raise DatabaseError(f"cannot reach the Redis server at {server}: {error}") from None
    return RedisExampleDatabase(client)


def hypothesis_settings(
    profile: Profile,
    database: ExampleDatabase | None,
    max_examples: int | None = None,
    step_count: int | None = None,
) -> settings:
    """The Hypothesis settings of one group run under ``profile``."""
    return settings(
        max_examples=max_examples or profile.max_examples,
        stateful_step_count=step_count or profile.step_count,
        deadline=None,
        database=database,
        derandomize=False,
        suppress_health_check=SUPPRESSED,
        report_multiple_bugs=True,
        print_blob=False,
        verbosity=Verbosity.normal,
        phases=tuple(p for p in Phase if p is not Phase.explain and (profile.targeting or p is not Phase.target)),
    )


@dataclass(slots=True)
class ShrinkBudget:
    """How long Hypothesis may shrink one failure, and whether a failure used it all."""

    seconds: int
    exhausted: bool = False

    def note(self) -> str:
        """What a counterexample shrunk under an exhausted budget should tell its reader."""
        return (
            f"(shrinking stopped when the profile's budget of {self.seconds} s ran out: the counterexample may hold "
            "more than its failure needs; --shrink-seconds gives it longer)"
        )


_SLOW_SHRINK = ("working to shrink", "took too long to shrink")
"""Fragments of what Hypothesis prints when it gives up shrinking at its deadline: a warning to its
own developers, then advice to add ``@seed`` to the test; a suite user replays the counterexample
file instead."""


@contextlib.contextmanager
def shrink_budget(budget: ShrinkBudget) -> Iterator[None]:
    """Let Hypothesis shrink one failure for at most ``seconds`` (its documented monkeypatch point).

    Hypothesis reports the deadline as a warning addressed to its own developers ("PLEASE REPORT
    THIS"), which is wrong here: the deadline is the profile's choice.  The warning is withheld and
    recorded on ``budget``, so the run can say it in its own words on each counterexample.
    """
    outer = reporting.current_reporter()

    def reporter(value: object) -> None:
        if isinstance(value, str) and any(fragment in value for fragment in _SLOW_SHRINK):
            budget.exhausted = True
        else:
            outer(value)

    previous = engine.MAX_SHRINKING_SECONDS
    engine.MAX_SHRINKING_SECONDS = budget.seconds
    try:
        with reporting.with_reporter(reporter):
            yield
    finally:
        engine.MAX_SHRINKING_SECONDS = previous


@contextlib.contextmanager
def fresh_examples() -> Iterator[None]:
    """Let Hypothesis generate every example afresh instead of copying parts of earlier ones.

    After each new example Hypothesis runs up to five copies of it in which one span is replaced by
    another span of the same label (its mutator, meant to put the same value in two places).  A
    span of a state machine is a step, so a copy replays the example's session up to some step and
    only then goes elsewhere: in a ``ci`` run of the header group 82 of 106 examples were such
    copies, so a rare situation one new example built came back in its copies, built the same way.
    The machines make their own repeats where a rule needs one (an id used twice, a header sent
    again); what the copies did add is more steps on sessions that differ after the copied step
    (``docs/strength.md``, eighth round).
    """
    runner = engine.ConjectureRunner
    previous = runner.generate_mutations_from

    def generate_no_copies(self: engine.ConjectureRunner, data: object) -> None:
        return None

    runner.generate_mutations_from = generate_no_copies  # type: ignore[method-assign]
    try:
        yield
    finally:
        runner.generate_mutations_from = previous  # type: ignore[method-assign]
