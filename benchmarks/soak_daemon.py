"""Soak the real daemon: sustained load for minutes or hours, sampling its resources.

Starts ``taskgui daemon`` the way a new user would (empty XDG folders, a fresh HOME,
no ``--db``), adds ``--tasks`` repeating tasks with intervals spread evenly from
``--min-interval`` to ``--max-interval`` (the issue's soak: 20 tasks every 1-3 s), and
samples the daemon every ``--sample`` seconds:

- **RSS** (``VmRSS``), **descriptors** (``/proc/PID/fd``) and **threads**
  (``/proc/PID/task``): flat over time is the goal; a leak shows as a slope.
- **runs**: every run appends one line to a log (its task id and the wall time when
  its command began), so the count is exact however the history is pruned.
- **start lateness** per sample window (p50 / p99 / max): the time a run's command
  wrote its line minus the occurrence it ran for. Every task is fixed-rate from a
  known first run time, so the occurrence is ``first + k * interval``. Measured from
  outside, so it includes the fork/exec of ``/bin/sh`` and of ``date`` (about a
  millisecond when idle): compare windows with each other, not with bench_dispatch.py.

The summary gives RSS at the start (after ``--warmup``) and at 10 / 20 / 60 minutes as
far as the run got, and the RSS slope from a least-squares line over the samples after
the warm-up: per minute and per run.

    python benchmarks/soak_daemon.py --minutes 20
    python benchmarks/soak_daemon.py --minutes 60 --csv soak.csv
    python benchmarks/soak_daemon.py --smoke      # 20 s: checks the script still works

It stops by itself after ``--minutes`` (SIGTERM to the daemon, then the summary) and
removes its temporary folder unless ``--keep``.
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKS_MINUTES = (10, 20, 60)


@dataclass(frozen=True, kw_only=True)
class Sample:
    HEADER = "elapsed_s,rss_kib,anon_kib,fds,threads,runs,late_p50_ms,late_p99_ms,late_max_ms"

    elapsed: float  # seconds since the daemon started
    rss_kib: int
    anon_kib: int  # RssAnon: the heap, where a leak shows (RSS also counts library pages)
    fds: int
    threads: int
    runs: int
    late_p50_ms: float
    late_p99_ms: float
    late_max_ms: float

    def row(self) -> str:
        return (
            f"{self.elapsed:.0f},{self.rss_kib},{self.anon_kib},{self.fds},{self.threads},"
            f"{self.runs},{self.late_p50_ms:.2f},{self.late_p99_ms:.2f},{self.late_max_ms:.2f}"
        )


@dataclass(frozen=True)
class Task:
    task_id: int
    first: float  # epoch seconds of its first occurrence
    interval: float


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (linear between closest ranks); nan when empty."""
    if len(values) < 2:
        return values[0] if values else math.nan
    cuts = statistics.quantiles(values, n=1000, method="inclusive")
    return (
        cuts[min(len(cuts) - 1, max(0, round(q * 10) - 1))]
        if 0 < q < 100
        else (min(values) if q <= 0 else max(values))
    )


def slope(points: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of y over x; nan with fewer than two points."""
    if len(points) < 2:
        return math.nan
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    if spread == 0:
        return math.nan
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


class Soak:
    """A daemon in a private home, its tasks, and the log its commands write."""

    def __init__(self, folder: Path, workers: int) -> None:
        self.folder = folder
        self.home = folder / "home"
        self.log = folder / "starts.log"
        self.workers = workers
        for name in ("home", "data", "state", "config", "runtime", "cache"):
            (folder / name).mkdir(mode=0o700)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.home),
            "XDG_DATA_HOME": str(folder / "data"),
            "XDG_STATE_HOME": str(folder / "state"),
            "XDG_CONFIG_HOME": str(folder / "config"),
            "XDG_RUNTIME_DIR": str(folder / "runtime"),
            "XDG_CACHE_HOME": str(folder / "cache"),
            "PYTHONPATH": str(ROOT),
            "QT_QPA_PLATFORM": "offscreen",
            "SOAK_LOG": str(self.log),
        }
        self.daemon: subprocess.Popen[bytes] | None = None
        self._read_offset = 0
        self._partial = b""

    def taskgui(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "taskgui", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"taskgui {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout

    def add_tasks(self, count: int, low: float, high: float, first: datetime) -> list[Task]:
        tasks = []
        for index in range(count):
            interval = low if count == 1 else low + (high - low) * index / (count - 1)
            interval = round(interval, 3)
            # Staggered, so that the tasks do not all fall due at one moment.
            at = first + timedelta(seconds=round(index * 0.137 % 1.0, 3))
            # dash has no clock of its own: date costs one more exec, in every window alike.
            command = 'echo "$TASKGUI_TASK_ID $(date +%s.%N)" >> "$SOAK_LOG"'
            out = self.taskgui(
                "add",
                "--name",
                f"soak {index}",
                "--command",
                command,
                "--every",
                f"{interval}s",
                "--at",
                at.isoformat(),
                "--max-attempts",
                "1",
            )
            task_id = int(out.split()[-1]) if out.split()[-1].isdigit() else index + 1
            tasks.append(Task(task_id, at.timestamp(), interval))
        return tasks

    def start(self) -> int:
        self.daemon = subprocess.Popen(
            [sys.executable, "-m", "taskgui", "daemon", "--workers", str(self.workers)],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=(self.folder / "daemon.stderr").open("wb"),
        )
        return self.daemon.pid

    def stop(self) -> int | None:
        if self.daemon is None:
            return None
        self.daemon.send_signal(signal.SIGTERM)
        try:
            return self.daemon.wait(30)
        except subprocess.TimeoutExpired:
            self.daemon.kill()
            return self.daemon.wait()

    def stderr_tail(self, lines: int = 20) -> str:
        text = (self.folder / "daemon.stderr").read_text(errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def new_starts(self) -> list[tuple[int, float]]:
        """Lines appended to the log since the last call: (task id, wall time)."""
        try:
            with self.log.open("rb") as file:
                file.seek(self._read_offset)
                data = file.read()
        except FileNotFoundError:
            return []
        self._read_offset += len(data)
        data = self._partial + data
        lines = data.split(b"\n")
        self._partial = lines.pop()
        starts = []
        for line in lines:
            parts = line.split()
            if len(parts) == 2:
                starts.append((int(parts[0]), float(parts[1])))
        return starts


def lateness(tasks: dict[int, Task], starts: Sequence[tuple[int, float]]) -> list[float]:
    values = []
    for task_id, began in starts:
        task = tasks.get(task_id)
        if task is None or began < task.first:
            continue
        values.append((began - task.first) % task.interval)
    return values


def read_proc(pid: int) -> tuple[int, int, int, int]:
    """RSS and anonymous RSS (KiB), open descriptors and threads of ``pid``."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value
    rss = int(fields["VmRSS"].split()[0])
    anon = int(fields.get("RssAnon", "0 kB").split()[0])
    fds = len(os.listdir(f"/proc/{pid}/fd"))
    threads = len(os.listdir(f"/proc/{pid}/task"))
    return rss, anon, fds, threads


def summarize(samples: Sequence[Sample], warmup: float) -> list[str]:
    settled = [sample for sample in samples if sample.elapsed >= warmup] or list(samples)
    if not settled:
        return ["no samples"]
    first = settled[0]

    def mib(sample: Sample) -> str:
        return f"RSS {sample.rss_kib / 1024:.1f} MiB (anon {sample.anon_kib / 1024:.1f})"

    lines = [f"at start ({first.elapsed / 60:.1f} min): {mib(first)}"]
    for minutes in MARKS_MINUTES:
        at = next((s for s in samples if s.elapsed >= minutes * 60), None)
        if at is not None:
            lines.append(f"at {minutes} min: {mib(at)}")
    last = samples[-1]
    lines.append(
        f"at the end ({last.elapsed / 60:.1f} min): {mib(last)}; "
        f"peak RSS {max(s.rss_kib for s in samples) / 1024:.1f} MiB"
    )
    runs = last.runs - first.runs
    seconds = last.elapsed - first.elapsed
    for name, value in (("RSS", lambda s: s.rss_kib), ("RssAnon", lambda s: s.anon_kib)):
        per_minute = slope([(s.elapsed / 60, value(s)) for s in settled])
        per_run = slope([(s.runs, value(s)) for s in settled])
        lines.append(
            f"{name} slope after warm-up: {per_minute:.2f} KiB/min, {per_run * 1024:.2f} bytes/run"
        )
    lines.append(
        f"{runs:,} runs in {seconds / 60:.1f} min after warm-up "
        f"({runs / max(seconds, 1e-9):.2f} runs/s)"
    )
    lines.append(
        f"descriptors {min(s.fds for s in settled)}-{max(s.fds for s in settled)}, "
        f"threads {min(s.threads for s in settled)}-{max(s.threads for s in settled)}"
    )
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--minutes", type=float, default=20.0)
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--min-interval", type=float, default=1.0)
    parser.add_argument("--max-interval", type=float, default=3.0)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--sample", type=float, default=30.0, help="seconds between samples")
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds before the slope")
    parser.add_argument("--csv", type=Path, help="also write every sample here")
    parser.add_argument("--dir", type=Path, help="where to make the temporary folder")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    parser.add_argument("--smoke", action="store_true", help="20 s, 5 tasks: the script works")
    args = parser.parse_args(argv)
    if args.smoke:
        args.minutes, args.tasks, args.sample, args.warmup = 1 / 3, 5, 5.0, 0.0
    return args


def sample_until(
    soak: Soak, pid: int, tasks: dict[int, Task], args: argparse.Namespace, out: list[str]
) -> tuple[list[Sample], list[float]]:
    """Sample the daemon every ``args.sample`` s until ``args.minutes`` have passed;
    print each sample (and keep it in ``out``, for the CSV). Also every lateness."""
    samples: list[Sample] = []
    every_late: list[float] = []
    began = time.monotonic()
    end = began + args.minutes * 60
    runs = 0
    while time.monotonic() < end:
        time.sleep(min(args.sample, max(0.0, end - time.monotonic())))
        if soak.daemon is not None and soak.daemon.poll() is not None:
            raise RuntimeError(
                f"the daemon exited with {soak.daemon.returncode} after "
                f"{time.monotonic() - began:.0f} s; its stderr ends:\n{soak.stderr_tail()}"
            )
        rss, anon, fds, threads = read_proc(pid)
        starts = soak.new_starts()
        runs += len(starts)
        late = [value * 1000 for value in lateness(tasks, starts)]
        if time.monotonic() - began >= args.warmup:
            every_late += late
        sample = Sample(
            elapsed=time.monotonic() - began,
            rss_kib=rss,
            anon_kib=anon,
            fds=fds,
            threads=threads,
            runs=runs,
            late_p50_ms=percentile(late, 50),
            late_p99_ms=percentile(late, 99),
            late_max_ms=max(late, default=math.nan),
        )
        samples.append(sample)
        row = sample.row()
        print(row, flush=True)
        out.append(row)
    return samples, every_late


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="taskgui-soak-", dir=args.dir))
    soak = Soak(folder, args.workers)
    samples: list[Sample] = []
    every_late: list[float] = []
    rows = [Sample.HEADER]
    try:
        # Far enough ahead for every `taskgui add` (a second each on a busy machine)
        # and the daemon's start: the first runs are then on time, not misfired.
        lead = 5 + 1.5 * args.tasks
        first = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=lead)
        added = soak.add_tasks(args.tasks, args.min_interval, args.max_interval, first)
        tasks = {task.task_id: task for task in added}
        rate = sum(1 / task.interval for task in added)
        pid = soak.start()
        print(
            f"taskgui soak: daemon pid {pid}, {len(tasks)} tasks every "
            f"{args.min_interval:g}-{args.max_interval:g} s (~{rate:.1f} runs/s), "
            f"{args.workers} workers, {args.minutes:g} min, folder {folder}"
        )
        print(Sample.HEADER)
        samples, every_late = sample_until(soak, pid, tasks, args, rows)
    finally:
        code = soak.stop()
        if args.csv:
            args.csv.write_text("\n".join(rows) + "\n", encoding="utf-8")
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print()
    for line in summarize(samples, args.warmup):
        print(line)
    print(
        f"start lateness after warm-up (ms, incl. fork/exec of sh and date): "
        f"p50 {percentile(every_late, 50):.2f}, p99 {percentile(every_late, 99):.2f}, "
        f"p99.9 {percentile(every_late, 99.9):.2f}, max {max(every_late, default=math.nan):.2f}"
    )
    print(f"daemon exit status {code}")
    return 0 if samples and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
