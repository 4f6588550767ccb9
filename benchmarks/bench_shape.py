"""The task's JSON shape: today's codec beside msgspec, and the bulk import beside raw SQL.

    python benchmarks/bench_shape.py            # 10,000 tasks and runs, 7 rounds
    python benchmarks/bench_shape.py --smoke    # tiny: checks the script still runs

Every path that writes or reads the shape (``taskgui.core.shape``) is measured on the
same realistic 10,000 tasks (commands with and without a folder, an environment or a
named shell; every schedule kind; a few retry policies; timeouts and keys) and 10,000
runs (with output), per item, the median of the rounds:

- **store encode / decode**: a task's definition columns (``codec.spec_values``) and
  whole rows back through ``codec.RowDecoder`` (a fresh decoder per round, so its memo
  starts cold as at a start);
- **export encode / decode**: ``dump_document(build_document(...))`` and
  ``parse_document`` of the file (with run history);
- **request encode / decode**: ``requests.encode_spec`` / ``decode_spec``;
- **runs encode / decode**: a run's JSON and back (``history --json``, an export);
- **bulk import**: ``SqliteRepository.add_tasks`` of the 10,000 in one transaction,
  beside the raw ``executemany`` of the same statements and rows in the same round
  (issue 16's goal: at most 2x).

The **msgspec** column (``pip install msgspec``; skipped without it) is the candidate:
``msgspec.Struct`` types of the same shape, decoded with validation at the boundary
and then built into the same core objects through the same constructors (the rules
live there), encoded by msgspec's C encoder; in the store's and the bulk path, the
command column's text is what msgspec writes and reads instead of the hand-written
code (schedules and policies are memoised text either way). Ratios are msgspec over
taskgui in the same round (below 1 means msgspec is faster).

Measured (2 CPUs, Python 3.11, msgspec 0.23; the machine shared with other test runs,
so absolute figures moved by up to 1.5x between runs; two full runs of 7 rounds each,
medians, msgspec/taskgui in the same rounds):

    store encode 0.73-1.16x   store decode 0.83-0.86x   request encode 0.23-0.27x
    export encode 0.16-0.17x  export decode 0.43-0.47x  request decode 0.15-0.17x
    runs encode 0.12x         runs decode 0.38-0.48x

    bulk import, x raw executemany in the same round: 3.24-3.28x before core/shape,
    2.92-3.31x after it, 2.98-3.95x with msgspec's command text (bench_store.py
    --quick: 2.7x before, 2.2x after; 2.1x in a quieter moment of the same session);
    after the cron fire-time memo, the identity-keyed schedule text and the twin-class
    copy (2026-12-01, --bulk-only, 3 runs of 3 rounds, load about 2): 1.98-2.02x,
    against 2.73-2.83x for the code before them in the same minutes

**Decision: msgspec is not adopted.** Where the schedule spends its time (the store's
rows, and so the bulk import and the start) it is at parity: those paths are the
hand-written command text and memoised schedule and policy text already, and the
bulk import's gap to raw SQL is the per-row Python around the JSON (building the
row tuple, the id copy, the cron first match), which no encoder changes. It is 2-8x
faster where whole documents are (de)serialised, which a person does rarely and at
a scale where taskgui's own takes well under a second (an export of 10,000 tasks
with 10,000 runs: about 0.7-1.0 s against 0.11-0.17 s), and it would bring a C
extension into ``core``, which is the standard library only, while its validation
errors do not name a field the way the export's reader must, so that reader would
stay beside it. Measured again if a document path becomes hot.

Only public names that existed before ``core/shape`` was written are used (decoding a
run is the exception, "n/a" there), so the script runs unchanged on an older checkout
for a before/after comparison. This is a benchmark, not a test: it exits 0 unless it
crashes.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from taskgui.core.recurrence import Cron, Every, EveryMode, Once, Recurrence  # noqa: E402
from taskgui.core.retry import Backoff, RetryPolicy  # noqa: E402
from taskgui.core.states import MisfirePolicy, OverlapPolicy, RunOutcome, SlotKind  # noqa: E402
from taskgui.core.status import RunRecord, TaskSnapshot, initial_status  # noqa: E402
from taskgui.core.task import Command, TaskSpec  # noqa: E402
from taskgui.core.transfer import export_file  # noqa: E402
from taskgui.store import codec, requests  # noqa: E402
from taskgui.store.sqlite.connection import connect  # noqa: E402
from taskgui.store.sqlite.insert import ROWS_PER_STATEMENT, insert_statement  # noqa: E402
from taskgui.store.sqlite.repository import SqliteRepository  # noqa: E402
from taskgui.store.sqlite.schema import migrate  # noqa: E402

try:
    import msgspec
except ImportError:  # the candidate is optional
    msgspec = None

try:  # decoding a run is part of the shape since core/shape; n/a before it
    from taskgui.core.shape.task import decode_run
except ImportError:
    decode_run = None

NOW = datetime(2026, 6, 1, 12, tzinfo=UTC)


@dataclass(frozen=True)
class Profile:
    items: int
    rounds: int


PROFILES = {"full": Profile(10_000, 7), "smoke": Profile(200, 1)}

# ------------------------------------------------------------------ workload

_SCHEDULES: tuple[Recurrence, ...] = (
    Once(),
    Once(),
    Every(timedelta(minutes=5)),
    Every(timedelta(hours=1), EveryMode.FIXED_DELAY),
    Cron("0 3 * * *", "UTC"),
    Cron("*/15 9-17 * * 1-5", "Europe/Berlin"),
    Cron("30 2 1 * *", "America/New_York"),
)
_RETRIES = (
    RetryPolicy(),
    RetryPolicy.no_retry(),
    RetryPolicy(backoff=Backoff.FIXED, max_attempts=5, base_delay=timedelta(seconds=30)),
)


def make_specs(count: int) -> list[TaskSpec]:
    """Tasks like people and imports make: 60% a plain shell line, the rest with a
    folder and an environment, run without a shell, or under a named shell."""
    rng = random.Random(14)
    specs = []
    for index in range(count):
        kind = index % 10
        line = f"rsync -a ~/projects/p{index}/ /mnt/backup/p{index}/"
        if kind < 6:
            command = Command(line=line)
        elif kind < 8:
            command = Command(
                line=f'backup.sh --tag "nightly {index}"',
                cwd=f"/home/ana/projects/p{index}",
                env=(("LANG", "de_DE.UTF-8"), ("TARGET", f"/mnt/ziel/{index}")),
            )
        elif kind < 9:
            command = Command(line=f"/usr/bin/python3 sync.py {index}", use_shell=False)
        else:
            command = Command(line=f"source ~/.profile && job {index}", shell_path="/bin/bash")
        schedule = _SCHEDULES[index % len(_SCHEDULES)]
        specs.append(
            TaskSpec(
                id=index + 1,
                name=f"sync folder {index}",
                command=command,
                first_run_at=NOW + timedelta(seconds=rng.randrange(30 * 86_400)),
                priority=rng.randrange(10),
                recurrence=schedule,
                retry=_RETRIES[index % len(_RETRIES)],
                timeout=timedelta(minutes=10) if index % 4 == 0 else None,
                concurrency_key="backup" if index % 5 == 0 else None,
                overlap=OverlapPolicy.SKIP,
                misfire=MisfirePolicy.RUN_ONCE,
                paused=index % 20 == 0,
            )
        )
    return specs


def make_runs(count: int) -> list[RunRecord]:
    runs = []
    for index in range(count):
        started = NOW + timedelta(seconds=index, microseconds=123_456)
        runs.append(
            RunRecord(
                id=index + 1,
                task_id=index % 500 + 1,
                attempt=1 + index % 3,
                kind=SlotKind.OCCURRENCE,
                scheduled_at=started,
                started_at=started,
                finished_at=started + timedelta(seconds=2),
                outcome=RunOutcome.SUCCEEDED if index % 7 else RunOutcome.FAILED,
                exit_code=0 if index % 7 else 1,
                error=None if index % 7 else "exit status 1",
                output=f"sent {index} bytes  received 35 bytes  speedup is 1.00\n" * 3,
                pid=10_000 + index,
            )
        )
    return runs


def rows_of(specs: list[TaskSpec]) -> list[tuple[Any, ...]]:
    return [
        (spec.id, *codec.spec_values(spec), *codec.status_values(initial_status(spec)))
        for spec in specs
    ]


# ------------------------------------------------------------ the candidate

# The shape as msgspec Structs, at module level so their annotations resolve.
if msgspec is not None:
    Struct = msgspec.Struct

    class CommandS(Struct, forbid_unknown_fields=True, omit_defaults=False):
        line: str
        v: int = 1
        shell: bool = True
        cwd: str | None = None
        env: list[tuple[str, str]] = msgspec.field(default_factory=list)
        shell_path: str | None = None

    class OnceS(Struct, tag="once", tag_field="kind", forbid_unknown_fields=True):
        v: int = 1

    class EveryS(Struct, tag="every", tag_field="kind", forbid_unknown_fields=True):
        seconds: float
        v: int = 1
        mode: str = "fixed_rate"

    class CronS(Struct, tag="cron", tag_field="kind", forbid_unknown_fields=True):
        expr: str
        v: int = 1
        tz: str = "UTC"

    class RetryS(Struct, forbid_unknown_fields=True):
        v: int = 1
        backoff: str = "exponential"
        max_attempts: int = 3
        base: float = 10.0
        max: float = 3600.0
        factor: float = 2.0
        jitter: bool = False

    class TaskS(Struct, forbid_unknown_fields=True):
        name: str
        command: CommandS
        first_run_at: datetime
        id: int | None = None
        state: str | None = None
        schedule: OnceS | EveryS | CronS | None = None
        retry: RetryS | None = None
        priority: int = 0
        timeout_seconds: float | None = None
        concurrency_key: str | None = None
        overlap: str = "skip"
        misfire: str = "run_once"
        misfire_grace_seconds: float = 60.0
        paused: bool = False

    class RunS(Struct, forbid_unknown_fields=True):
        id: int
        attempt: int
        kind: str
        scheduled_at: datetime
        task_id: int = 0  # an export's runs carry it since core/shape
        started_at: datetime | None = None
        finished_at: datetime | None = None
        outcome: str | None = None
        exit_code: int | None = None
        error: str | None = None
        output: str = ""
        pid: int | None = None
        missed: int = 0

    class DocumentS(Struct):
        format: str
        version: int
        exported_at: datetime
        tasks: list[TaskS]
        runs: dict[str, list[RunS]] | None = None


def msgspec_candidate() -> dict[str, Callable[..., Any]] | None:  # noqa: PLR0915
    """The shape as msgspec Structs, and the same paths written with them."""
    if msgspec is None:
        return None
    encoder = msgspec.json.Encoder()
    encode = encoder.encode
    command_decoder = msgspec.json.Decoder(CommandS)
    task_decoder = msgspec.json.Decoder(TaskS)
    document_decoder = msgspec.json.Decoder(DocumentS)
    runs_decoder = msgspec.json.Decoder(list[RunS])

    def command_s(command: Command) -> CommandS:
        return CommandS(
            line=command.line,
            v=1 if command.shell_path is None else 2,
            shell=command.use_shell,
            cwd=command.cwd,
            env=list(command.env),
            shell_path=command.shell_path,
        )

    def command_of(value: CommandS) -> Command:
        if not 1 <= value.v <= 2:
            raise ValueError(f"version {value.v}")
        return Command(
            line=value.line,
            use_shell=value.shell,
            cwd=value.cwd,
            env=tuple(value.env),
            shell_path=value.shell_path,
        )

    def schedule_s(recurrence: Recurrence) -> OnceS | EveryS | CronS:
        if isinstance(recurrence, Every):
            return EveryS(seconds=recurrence.interval.total_seconds(), mode=recurrence.mode.value)
        if isinstance(recurrence, Cron):
            return CronS(expr=recurrence.expr, tz=recurrence.tz)
        return OnceS()

    schedules: dict[Any, Recurrence] = {}
    retries: dict[Any, RetryPolicy] = {}

    def schedule_of(value: OnceS | EveryS | CronS | None) -> Recurrence:
        key = None if value is None else (*msgspec.structs.astuple(value), type(value))
        if key in schedules:
            return schedules[key]
        if isinstance(value, EveryS):
            made: Recurrence = Every(timedelta(seconds=value.seconds), EveryMode(value.mode))
        elif isinstance(value, CronS):
            made = Cron(value.expr, value.tz)
        else:
            made = Once()
        schedules[key] = made
        return made

    def retry_s(policy: RetryPolicy) -> RetryS:
        return RetryS(
            backoff=policy.backoff.value,
            max_attempts=policy.max_attempts,
            base=policy.base_delay.total_seconds(),
            max=policy.max_delay.total_seconds(),
            factor=policy.factor,
            jitter=policy.jitter,
        )

    def retry_of(value: RetryS | None) -> RetryPolicy:
        key = None if value is None else msgspec.structs.astuple(value)
        if key in retries:
            return retries[key]
        made = (
            RetryPolicy()
            if value is None
            else RetryPolicy(
                backoff=Backoff(value.backoff),
                max_attempts=value.max_attempts,
                base_delay=timedelta(seconds=value.base),
                max_delay=timedelta(seconds=value.max),
                factor=value.factor,
                jitter=value.jitter,
            )
        )
        retries[key] = made
        return made

    def task_s(spec: TaskSpec, state: str | None) -> TaskS:
        return TaskS(
            id=spec.id,
            name=spec.name,
            state=state,
            command=command_s(spec.command),
            first_run_at=spec.first_run_at,
            schedule=schedule_s(spec.recurrence),
            retry=retry_s(spec.retry),
            priority=spec.priority,
            timeout_seconds=None if spec.timeout is None else spec.timeout.total_seconds(),
            concurrency_key=spec.concurrency_key,
            overlap=spec.overlap.value,
            misfire=spec.misfire.value,
            misfire_grace_seconds=spec.misfire_grace.total_seconds(),
            paused=spec.paused,
        )

    def spec_of(value: TaskS) -> TaskSpec:
        return TaskSpec(
            id=value.id or 0,
            name=value.name,
            command=command_of(value.command),
            first_run_at=value.first_run_at,
            recurrence=schedule_of(value.schedule),
            retry=retry_of(value.retry),
            priority=value.priority,
            timeout=(
                None if value.timeout_seconds is None else timedelta(seconds=value.timeout_seconds)
            ),
            concurrency_key=value.concurrency_key,
            overlap=OverlapPolicy(value.overlap),
            misfire=MisfirePolicy(value.misfire),
            misfire_grace=timedelta(seconds=value.misfire_grace_seconds),
            paused=value.paused,
        )

    def run_s(run: RunRecord) -> RunS:
        return RunS(
            id=run.id,
            task_id=run.task_id,
            attempt=run.attempt,
            kind=run.kind.value,
            scheduled_at=run.scheduled_at,
            started_at=run.started_at,
            finished_at=run.finished_at,
            outcome=None if run.outcome is None else run.outcome.value,
            exit_code=run.exit_code,
            error=run.error,
            output=run.output,
            pid=run.pid,
            missed=run.missed,
        )

    def run_of(value: RunS) -> RunRecord:
        return RunRecord(
            id=value.id,
            task_id=value.task_id,
            attempt=value.attempt,
            kind=SlotKind(value.kind),
            scheduled_at=value.scheduled_at,
            started_at=value.started_at,
            finished_at=value.finished_at,
            outcome=None if value.outcome is None else RunOutcome(value.outcome),
            exit_code=value.exit_code,
            error=value.error,
            output=value.output,
            pid=value.pid,
            missed=value.missed,
        )

    def command_text(command: Command) -> str:
        return encode(command_s(command)).decode()

    new_command = getattr(DECODING, "_new_command", None)

    def plain_command(text: str) -> Command | None:
        # The store's trusted path: a command in its canonical form, built unchecked.
        try:
            value = command_decoder.decode(text)
        except msgspec.DecodeError:
            return None
        line = value.line
        if (
            new_command is None
            or value.v != 1
            or value.env
            or value.cwd is not None
            or not line.strip()
            or "\0" in line
            or not line.isprintable()
        ):
            return None
        return new_command(line=line, use_shell=value.shell, cwd=None, env=(), shell_path=None)

    def decode_command(text: str) -> Command:
        try:
            return command_of(command_decoder.decode(text))
        except (msgspec.DecodeError, ValueError) as error:
            raise DECODING.CodecError(str(error)) from None

    def dump_document(snapshots: list[TaskSnapshot], runs: dict[int, list[RunRecord]]) -> str:
        document = DocumentS(
            format="taskgui-export",
            version=1,
            exported_at=NOW,
            tasks=[task_s(s.spec, s.state.value) for s in snapshots],
            runs={str(s.id): [run_s(r) for r in runs.get(s.id, ())] for s in snapshots},
        )
        return msgspec.json.format(encode(document), indent=2).decode() + "\n"

    def parse_document(text: str) -> list[TaskSpec]:
        document = document_decoder.decode(text)
        return [spec_of(task).with_id(0) for task in document.tasks]

    def encode_spec(spec: TaskSpec) -> bytes:
        return encode(task_s(spec, None))

    def decode_spec(payload: bytes) -> TaskSpec:
        return spec_of(task_decoder.decode(payload))

    def encode_runs(runs: list[RunRecord]) -> bytes:
        return encode([run_s(run) for run in runs])

    def decode_runs(text: bytes) -> list[RunRecord]:
        return [run_of(value) for value in runs_decoder.decode(text)]

    return {
        "command_text": command_text,
        "plain_command": plain_command,
        "decode_command": decode_command,
        "dump_document": dump_document,
        "parse_document": parse_document,
        "encode_spec": encode_spec,
        "decode_spec": decode_spec,
        "encode_runs": encode_runs,
        "decode_runs": decode_runs,
    }


try:  # where the row decoder's helpers live since core/shape; codec before it
    from taskgui.store import row_decoder as DECODING  # noqa: N812
except ImportError:
    DECODING = codec  # type: ignore[misc]


class Patched:
    """Module-level names of ``module`` replaced for the length of a ``with``."""

    def __init__(self, module: Any, **names: Callable[..., Any]) -> None:
        self.module = module
        self.names = names
        self.saved: dict[str, Any] = {}

    def __enter__(self) -> None:
        for name, value in self.names.items():
            self.saved[name] = getattr(self.module, name)
            setattr(self.module, name, value)

    def __exit__(self, *_: object) -> None:
        for name, value in self.saved.items():
            setattr(self.module, name, value)


# ------------------------------------------------------------------ timing


def once(work: Callable[[], object]) -> float:
    gc.collect()
    began = time.perf_counter()
    work()
    return time.perf_counter() - began


@dataclass
class Row:
    path: str
    taskgui: list[float]
    msgspec: list[float]

    def medians(self, items: int) -> tuple[float | None, float | None]:
        def median(values: list[float]) -> float | None:
            return statistics.median(values) * 1e6 / items if values else None

        return median(self.taskgui), median(self.msgspec)


def measure(
    profile: Profile, tmp: Path, *, bulk_only: bool = False
) -> tuple[list[Row], list[tuple[float, float, float]]]:
    specs = make_specs(profile.items)
    runs = make_runs(profile.items)
    rows = rows_of(specs)
    snapshots = [TaskSnapshot(spec, initial_status(spec)) for spec in specs]
    by_task: dict[int, list[RunRecord]] = {}
    for run in runs:
        by_task.setdefault(run.task_id, []).append(run)
    export_text = export_file.dump_document(export_file.build_document(snapshots, NOW, by_task))
    payloads = [requests.encode_spec(spec) for spec in specs]
    runs_text = json.dumps([export_file.run_json(run) for run in runs])
    candidate = msgspec_candidate()
    ms_payloads = [] if candidate is None else [candidate["encode_spec"](s) for s in specs]
    ms_runs_text = b"" if candidate is None else candidate["encode_runs"](runs)

    def decode_runs() -> object:
        assert decode_run is not None
        return [decode_run(value) for value in json.loads(runs_text)]

    work: list[tuple[str, Callable[[], object], Callable[[], object] | None]] = [
        (
            "store encode (definition columns)",
            lambda: [codec.spec_values(spec) for spec in specs],
            None
            if candidate is None
            else lambda: _with(
                Patched(codec, encode_command=candidate["command_text"]),
                lambda: [codec.spec_values(spec) for spec in specs],
            ),
        ),
        (
            "store decode (whole rows, cold memo)",
            lambda: _decode_rows(rows),
            None
            if candidate is None
            else lambda: _with(
                Patched(
                    DECODING,
                    _plain_command=candidate["plain_command"],
                    _decode_command=candidate["decode_command"],
                ),
                lambda: _decode_rows(rows),
            ),
        ),
        (
            "export encode (file with history)",
            lambda: export_file.dump_document(export_file.build_document(snapshots, NOW, by_task)),
            None if candidate is None else lambda: candidate["dump_document"](snapshots, by_task),
        ),
        (
            "export decode (parse the file)",
            lambda: export_file.parse_document(export_text),
            None if candidate is None else lambda: candidate["parse_document"](export_text),
        ),
        (
            "request encode (a definition)",
            lambda: [requests.encode_spec(spec) for spec in specs],
            None if candidate is None else lambda: [candidate["encode_spec"](s) for s in specs],
        ),
        (
            "request decode (a definition)",
            lambda: [requests.decode_spec(payload) for payload in payloads],
            None
            if candidate is None
            else lambda: [candidate["decode_spec"](payload) for payload in ms_payloads],
        ),
        (
            "runs encode (history JSON)",
            lambda: json.dumps([export_file.run_json(run) for run in runs]),
            None if candidate is None else lambda: candidate["encode_runs"](runs),
        ),
        (
            "runs decode (history JSON)",
            decode_runs if decode_run is not None else None,  # type: ignore[list-item]
            None if candidate is None else lambda: candidate["decode_runs"](ms_runs_text),
        ),
    ]
    if bulk_only:
        work = []
    results = [Row(name, [], []) for name, _, _ in work]
    bulk: list[tuple[float, float, float]] = []
    params = _bulk_params(specs)
    for round_index in range(profile.rounds):
        for row, (_, ours, theirs) in zip(results, work, strict=True):
            pair = [(row.taskgui, ours), (row.msgspec, theirs)]
            if round_index % 2:
                pair.reverse()  # nobody always goes first
            for times, job in pair:
                if job is not None:
                    times.append(once(job))
        bulk.append(_bulk_round(specs, params, tmp, round_index, candidate))
    return results, bulk


def _with(context: Patched, work: Callable[[], object]) -> object:
    with context:
        return work()


def _decode_rows(rows: list[tuple[Any, ...]]) -> object:
    snapshot = codec.RowDecoder().snapshot
    return [snapshot(row) for row in rows]


def _bulk_params(specs: list[TaskSpec]) -> list[tuple[Any, ...]]:
    """The parameters of taskgui's bulk INSERT statements, prepared beforehand."""
    rows = [codec.new_task_values(spec) for spec in specs]
    per = ROWS_PER_STATEMENT
    full = len(rows) - len(rows) % per
    return [
        (codec.to_us(NOW), *itertools.chain.from_iterable(rows[start : start + per]))
        for start in range(0, full, per)
    ]


def _bulk_round(
    specs: list[TaskSpec],
    params: list[tuple[Any, ...]],
    tmp: Path,
    index: int,
    candidate: dict[str, Callable[..., Any]] | None,
) -> tuple[float, float, float]:
    """Seconds for raw executemany, taskgui's add_tasks, and add_tasks with msgspec."""
    # The specs are new tasks, as an import hands them over (id 0), with schedules
    # never asked before: a cron schedule remembers its answers (core/cron/memo.py),
    # and an import's reader builds one object per distinct schedule.
    schedules = {schedule: _copy_schedule(schedule) for schedule in _SCHEDULES}
    fresh = [replace(spec, id=0, recurrence=schedules[spec.recurrence]) for spec in specs]
    count = len(params) * ROWS_PER_STATEMENT
    fresh = fresh[:count]

    def raw() -> float:
        path = tmp / f"raw-{index}.sqlite3"
        db = connect(path)
        migrate(db, path)
        statement = insert_statement(ROWS_PER_STATEMENT)

        def insert() -> None:
            db.execute("BEGIN IMMEDIATE")
            db.executemany(statement, params)
            db.execute("COMMIT")

        seconds = once(insert)
        db.close()
        return seconds

    def ours(name: str) -> float:
        repo = SqliteRepository(tmp / f"{name}-{index}.sqlite3")
        seconds = once(lambda: repo.add_tasks(fresh, NOW))
        repo.close()
        return seconds

    raw_s = raw()
    taskgui_s = ours("taskgui")
    msgspec_s = float("nan")
    if candidate is not None:
        with Patched(codec, encode_command=candidate["command_text"]):
            msgspec_s = ours("msgspec")
    for path in tmp.iterdir():
        path.unlink()
    return raw_s, taskgui_s, msgspec_s


def _copy_schedule(schedule: Recurrence) -> Recurrence:
    """An equal schedule object that has answered nothing yet."""
    return Cron(schedule.expr, schedule.tz) if isinstance(schedule, Cron) else schedule


# ------------------------------------------------------------------ report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a tiny run (for the test)")
    parser.add_argument("--items", type=int, help="tasks and runs (default 10,000)")
    parser.add_argument("--rounds", type=int, help="rounds; each figure is their median")
    parser.add_argument("--bulk-only", action="store_true", help="only the bulk import")
    args = parser.parse_args(argv)
    profile = PROFILES["smoke" if args.smoke else "full"]
    profile = Profile(args.items or profile.items, args.rounds or profile.rounds)
    mode = " (smoke)" if args.smoke else ""
    print(
        f"taskgui shape benchmark{mode}: {profile.items:,} tasks and runs, "
        f"median of {profile.rounds} round(s)"
    )
    if msgspec is None:
        print("msgspec is not installed: its column is skipped (pip install msgspec)")
    else:
        print(f"msgspec {msgspec.__version__}")
    with tempfile.TemporaryDirectory(prefix="bench-shape-") as folder:
        rows, bulk = measure(profile, Path(folder), bulk_only=args.bulk_only)
    header = f"{'path (µs per item)':<40} {'taskgui':>9} {'msgspec':>9} {'msgspec/taskgui':>16}"
    print(header)
    print("-" * len(header))
    for row in rows:
        ours, theirs = row.medians(profile.items)
        ratio = "n/a" if ours is None or theirs is None else f"{theirs / ours:.2f}x"
        print(f"{row.path:<40} {_cell(ours):>9} {_cell(theirs):>9} {ratio:>16}")
    count = len(bulk) and profile.items - profile.items % ROWS_PER_STATEMENT
    raw = statistics.median(b[0] for b in bulk) * 1e6 / count
    ours_bulk = statistics.median(b[1] for b in bulk) * 1e6 / count
    ratios = [b[1] / b[0] for b in bulk]
    print()
    print(f"bulk import, {count:,} tasks in one add_tasks (µs per task, median):")
    print(
        f"  raw executemany {raw:.2f}, taskgui {ours_bulk:.2f}: "
        f"{statistics.median(ratios):.2f}x raw in the same round (goal: at most 2x)"
    )
    if msgspec is not None:
        theirs_bulk = statistics.median(b[2] for b in bulk) * 1e6 / count
        ms_ratios = [b[2] / b[0] for b in bulk]
        print(
            f"  with msgspec's command text: {theirs_bulk:.2f}: "
            f"{statistics.median(ms_ratios):.2f}x raw"
        )
    return 0


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


if __name__ == "__main__":
    sys.exit(main())
