"""Hypothesis strategies for every value of the task's JSON shape (``core.shape``):
commands, schedules of each kind, retry policies, definitions, statuses and runs."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from taskgui.core.recurrence import Cron, Every, EveryMode, Once, Recurrence
from taskgui.core.retry import MAX_ATTEMPTS_LIMIT, Backoff, RetryPolicy
from taskgui.core.states import MisfirePolicy, OverlapPolicy, RunOutcome, SlotKind, TaskState
from taskgui.core.status import RunRecord, TaskStatus
from taskgui.core.task import PRIORITY_MAX, PRIORITY_MIN, Command, TaskSpec
from taskgui.core.text_rules import has_visible_character
from taskgui.core.wake import parse_wake_policy
from tests.helpers.factories import T0

MIN_TIME = datetime(1970, 1, 1)
MAX_TIME = datetime(2200, 1, 1)
utc_times = st.datetimes(min_value=MIN_TIME, max_value=MAX_TIME, timezones=st.just(UTC))

# Durations up to 100 years: stored as REAL seconds, they round-trip to the microsecond
# up to about 2**52 us (~142 years); beyond that a float cannot hold every microsecond.
durations = st.timedeltas(min_value=timedelta(microseconds=1), max_value=timedelta(days=36_500))
safe_text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\0"))
env_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,20}", fullmatch=True)


def splits(line: str) -> bool:
    """Whether a line run without the shell can be split into words (Command refuses
    one that cannot)."""
    try:
        shlex.split(line)
    except ValueError:
        return False
    return True


def commands_of(
    lines: st.SearchStrategy[str],
    cwd: st.SearchStrategy[str | None],
    env: st.SearchStrategy[tuple[tuple[str, str], ...]],
) -> st.SearchStrategy[Command]:
    """Commands through the shell or not; a line run without it is one that splits."""
    lines = lines.filter(str.strip)
    return st.one_of(
        st.builds(Command, line=lines, use_shell=st.just(True), cwd=cwd, env=env),
        st.builds(Command, line=lines.filter(splits), use_shell=st.just(False), cwd=cwd, env=env),
    )


commands = commands_of(
    safe_text,
    st.none() | safe_text,
    st.dictionaries(env_names, safe_text, max_size=4).map(lambda env: tuple(env.items())),
)
recurrences: st.SearchStrategy[Recurrence] = st.one_of(
    st.just(Once()),
    st.builds(
        Every,
        st.timedeltas(min_value=timedelta(seconds=1), max_value=timedelta(days=36_500)),
        st.sampled_from(list(EveryMode)),
    ),
    st.builds(
        Cron,
        st.sampled_from(["*/5 * * * *", "0 9 * * 1-5", "30 2 1 * *", "@daily", "0 0 29 2 *"]),
        st.sampled_from(["UTC", "Europe/Berlin", "America/New_York", "Australia/Lord_Howe"]),
    ),
)


@st.composite
def retry_policies(draw: st.DrawFn) -> RetryPolicy:
    base = draw(durations)
    return RetryPolicy(
        backoff=draw(st.sampled_from(list(Backoff))),
        max_attempts=draw(st.integers(1, MAX_ATTEMPTS_LIMIT)),
        base_delay=base,
        max_delay=base + draw(st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=30))),
        factor=draw(st.floats(1.0, 100.0, allow_nan=False)),
        jitter=draw(st.booleans()),
    )


specs = st.builds(
    TaskSpec,
    id=st.integers(1, 2**62),
    name=safe_text.filter(
        lambda text: 0 < len(text.strip()) <= 200 and has_visible_character(text)
    ),
    command=commands,
    first_run_at=utc_times,
    priority=st.integers(PRIORITY_MIN, PRIORITY_MAX),
    recurrence=recurrences,
    retry=retry_policies(),
    timeout=st.none() | durations,
    concurrency_key=st.none() | safe_text.filter(lambda text: len(text.strip()) <= 200),
    overlap=st.sampled_from(list(OverlapPolicy)),
    misfire=st.sampled_from(list(MisfirePolicy)),
    misfire_grace=st.just(timedelta(0)) | durations,
    paused=st.booleans(),
    on_wake=st.none()
    | st.sampled_from(["now", "ask", "spread:10m", "spread:1h", "spread:90s"]).map(
        parse_wake_policy
    ),
)
optional_times = st.none() | utc_times
statuses = st.builds(
    TaskStatus,
    state=st.sampled_from(list(TaskState)),
    attempt=st.integers(0, MAX_ATTEMPTS_LIMIT),
    next_run_at=optional_times,
    slot_kind=st.none() | st.sampled_from(list(SlotKind)),
    scheduled_at=optional_times,
    slot_attempt=st.integers(1, MAX_ATTEMPTS_LIMIT),
    deferred_at=optional_times,
    last_outcome=st.none() | st.sampled_from(list(RunOutcome)),
    last_run_at=optional_times,
    # Live fields the engine knows only while running; never stored.
    running=st.just(0),
    running_since=st.none(),
    waiting=st.none(),
    # Fan-in marks are kept only for upstreams the task has: none for these specs.
    after_marks=st.just(frozenset()),
    nodes=st.just(()),  # a shared schedule's follower lays them over; never stored
)


@st.composite
def shell_commands(draw: st.DrawFn) -> Command:
    """A command of either version: one that names its shell is version 2."""
    command = draw(commands)
    if draw(st.booleans()):
        return Command(
            line=command.line,
            use_shell=True,
            cwd=command.cwd,
            env=command.env,
            shell_path=draw(st.sampled_from(["/bin/bash", "/usr/bin/zsh"])),
        )
    return command


runs = st.builds(
    RunRecord,
    id=st.integers(1, 2**62),
    task_id=st.integers(1, 2**62),
    attempt=st.integers(1, MAX_ATTEMPTS_LIMIT),
    kind=st.sampled_from(list(SlotKind)),
    scheduled_at=utc_times,
    started_at=optional_times,
    finished_at=optional_times,
    outcome=st.none() | st.sampled_from(list(RunOutcome)),
    exit_code=st.none() | st.integers(-255, 255),
    error=st.none() | safe_text,
    output=safe_text,
    pid=st.none() | st.integers(1, 2**22),
    missed=st.integers(0, 1000),
    node=st.just(""),  # read from a shared schedule's runs table only
)


LATER = T0 + timedelta(days=1, microseconds=654_321)
# One task of each kind: every schedule kind, retry policy and command form; the first
# runs at T0 + 123 ms, the rest a day later, with microseconds.
EVERY_SHAPE = [
    TaskSpec(  # once; the default retry; a plain shell line; runs once below
        name="once",
        command=Command(line="backup.sh --all"),
        first_run_at=T0 + timedelta(milliseconds=123),
        recurrence=Once(),
    ),
    TaskSpec(  # every, fixed rate; no retry; a folder and an environment; timeout, key
        name="every rate",
        command=Command(line="sync", cwd="/srv/data", env=(("LANG", "C"), ("Z", "ü"))),
        first_run_at=LATER,
        recurrence=Every(timedelta(minutes=5), EveryMode.FIXED_RATE),
        retry=RetryPolicy.no_retry(),
        timeout=timedelta(seconds=90.5),
        concurrency_key="disk",
    ),
    TaskSpec(  # every, fixed delay; fixed backoff; no shell; paused; a high priority
        name="every delay",
        command=Command(line="/usr/bin/python3 job.py", use_shell=False),
        first_run_at=LATER,
        recurrence=Every(timedelta(hours=1), EveryMode.FIXED_DELAY),
        retry=RetryPolicy(
            backoff=Backoff.FIXED,
            max_attempts=5,
            base_delay=timedelta(seconds=30),
            max_delay=timedelta(seconds=30),
        ),
        priority=9,
        paused=True,
    ),
    TaskSpec(  # cron in a zone; exponential with jitter; a named shell (version 2)
        name="cron <b>berlin</b> \u202e",
        command=Command(line="source ~/.profile && run", shell_path="/bin/bash"),
        first_run_at=LATER,
        recurrence=Cron("0 3 * * *", "Europe/Berlin"),
        retry=RetryPolicy(
            max_attempts=7,
            base_delay=timedelta(seconds=5),
            max_delay=timedelta(hours=2),
            factor=3.0,
            jitter=True,
        ),
        overlap=OverlapPolicy.QUEUE,
        misfire=MisfirePolicy.SKIP,
        misfire_grace=timedelta(0),
        priority=-3,
    ),
    TaskSpec(  # a cron nickname in another zone
        name="cron daily",
        command=Command(line="report"),
        first_run_at=LATER,
        recurrence=Cron("@daily", "America/New_York"),
    ),
]
