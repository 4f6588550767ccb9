"""The daemon's memory with many pending tasks, beside APScheduler 3's memory store.

    python benchmarks/bench_memory.py            # 100k and 1M pending tasks
    python benchmarks/bench_memory.py --sizes 100000
    python benchmarks/bench_memory.py --smoke    # 1,000 tasks: checks the script still runs

taskgui: the tasks are written to a fresh SQLite file, then the real daemon starts
on it as a new user would (empty XDG folders, a private HOME), and its resident set
(VmRSS) is read once it logs that it has read what it keeps: the tasks due within a
minute whole, every other one as its id and run time (read when it nears its time),
as it is for the rest of its life but for the tasks about to run. APScheduler 3 (``pip install -e
'.[bench]'``): a ``BackgroundScheduler`` with its ``MemoryJobStore``, started paused,
given the same tasks as ``date`` jobs (id, name, the command line as the argument),
in a fresh process; its VmRSS after a full collection. Both figures are whole
processes, so each includes its interpreter and libraries; the empty process of each
is measured too, and the ratio is taken of the totals (goal: taskgui at most half).

The tasks are those of ``bench_store.py``: each its own name, command line and run
time within the next month, a priority, some recurring. Nothing falls due while the
benchmark runs. This is a benchmark, not a test: it exits 0 unless it crashes.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from taskgui.core.recurrence import Every, Once  # noqa: E402
from taskgui.core.retry import RetryPolicy  # noqa: E402
from taskgui.core.task import Command, TaskSpec  # noqa: E402
from taskgui.store.sqlite.repository import SqliteRepository  # noqa: E402

try:
    import apscheduler
    from apscheduler.schedulers.background import BackgroundScheduler

    APSCHEDULER: str | None = str(getattr(apscheduler, "__version__", "3.x"))
except ImportError:  # pip install -e '.[bench]' for the peer's figures
    APSCHEDULER = None

RUNNING = "taskgui daemon (pid"  # its first line, once the schedule is armed
LOADING = "in the background"  # "loading N stored tasks in the background"
LOADED = "every stored task is loaded"
READ = "the schedule is read"  # the tasks due soon are in memory, the rest unread
START_TIMEOUT = 900.0  # seconds for a daemon to load its tasks; 1M takes well under that


def now() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


def make_specs(count: int, at: datetime) -> list[TaskSpec]:
    """One-off tasks within the next month, one in ten recurring hourly (first run
    an hour ahead or more, so nothing is due while the benchmark runs)."""
    specs = []
    hourly = Every(timedelta(hours=1))
    for index in range(count):
        recurring = index % 10 == 0
        specs.append(
            TaskSpec(
                name=f"sync folder {index}",
                command=Command(line=f"rsync -a ~/projects/p{index}/ /mnt/backup/p{index}/"),
                first_run_at=at + timedelta(seconds=3_600 + (index * 7_919) % (30 * 86_400)),
                priority=index % 10,
                recurrence=hourly if recurring else Once(),
                retry=RetryPolicy() if index % 2 else RetryPolicy.no_retry(),
            )
        )
    return specs


def vm_status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of a process, in bytes."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            found[name] = int(value.split()[0]) * 1024
    return found


# ------------------------------------------------------------------ taskgui


def seed_database(path: Path, count: int) -> float:
    """Write ``count`` tasks to a fresh SQLite file; seconds taken."""
    began = time.perf_counter()
    repo = SqliteRepository(path)
    at = now()
    specs = make_specs(count, at)
    for start in range(0, count, 50_000):
        repo.add_tasks(specs[start : start + 50_000], at)
    repo.close()
    return time.perf_counter() - began


def new_account(folder: Path) -> dict[str, str]:
    """The environment of a new user whose every folder is under ``folder``."""
    for name in ("home", "data", "state", "config", "runtime", "cache"):
        (folder / name).mkdir(mode=0o700, parents=True, exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(folder / "home"),
        "XDG_DATA_HOME": str(folder / "data"),
        "XDG_STATE_HOME": str(folder / "state"),
        "XDG_CONFIG_HOME": str(folder / "config"),
        "XDG_RUNTIME_DIR": str(folder / "runtime"),
        "XDG_CACHE_HOME": str(folder / "cache"),
        "PYTHONPATH": str(ROOT),
        "QT_QPA_PLATFORM": "offscreen",
    }


@contextmanager
def daemon_on(
    db: Path, env: dict[str, str], stderr_path: Path
) -> Iterator[subprocess.Popen[bytes]]:
    """``taskgui daemon`` on ``db`` as the account of ``env``, its log in
    ``stderr_path``; stopped with SIGTERM (then SIGKILL) on leaving."""
    with stderr_path.open("wb") as stderr:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "taskgui", "--db", str(db), "daemon"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        yield daemon
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(60)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()


def daemon_rss(folder: Path, db: Path) -> tuple[dict[str, int], float]:
    """Start the daemon on ``db``; its memory once every task is loaded, and seconds
    to get there."""
    env = new_account(folder)
    stderr_path = folder / "daemon.stderr"
    began = time.perf_counter()
    with daemon_on(db, env, stderr_path) as daemon:
        deadline = began + START_TIMEOUT
        running_since: float | None = None
        while time.perf_counter() < deadline:
            if daemon.poll() is not None:
                raise RuntimeError(
                    f"the daemon exited with {daemon.returncode}:\n"
                    + stderr_path.read_text(errors="replace")[-2000:]
                )
            text = stderr_path.read_text(errors="replace")
            if LOADED in text or READ in text:
                break
            if RUNNING in text and running_since is None:
                running_since = time.perf_counter()
            # A schedule small enough to load whole at start says no more.
            if running_since and LOADING not in text and time.perf_counter() > running_since + 2:
                break
            time.sleep(0.2)
        else:
            raise RuntimeError(f"the daemon did not load its tasks in {START_TIMEOUT:.0f} s")
        loaded = time.perf_counter() - began
        time.sleep(1.0)  # let the event loop settle after the last chunk
        return vm_status(daemon.pid), loaded


# ------------------------------------------------------------------ APScheduler


def aps_child(count: int) -> None:
    """In a fresh process: APScheduler 3's memory store holding ``count`` jobs."""
    scheduler = BackgroundScheduler(timezone=UTC)
    scheduler.start(paused=True)  # jobs never run here
    at = now()
    # In run-time order: its store keeps a sorted list, and appending is the cheap
    # insertion; memory does not depend on the order.
    specs = sorted(make_specs(count, at), key=lambda spec: spec.first_run_at)
    for index, spec in enumerate(specs):
        if spec.recurrence.is_recurring:
            trigger, options = "interval", {"hours": 1, "start_date": spec.first_run_at}
        else:
            trigger, options = "date", {"run_date": spec.first_run_at}
        scheduler.add_job(
            print,  # never runs: the scheduler stays paused
            trigger,
            args=(spec.command.line,),
            id=str(index),
            name=spec.name,
            **options,
        )
    del specs
    gc.collect()
    print(json.dumps(vm_status(os.getpid())))
    scheduler.shutdown(wait=False)


def aps_rss(count: int) -> dict[str, int] | None:
    result = subprocess.run(
        [sys.executable, __file__, "--aps-child", str(count)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        if "No module named 'apscheduler'" in result.stderr:
            return None
        raise RuntimeError(result.stderr[-2000:])
    found: dict[str, int] = json.loads(result.stdout.strip().splitlines()[-1])
    return found


# ------------------------------------------------------------------ main


def mib(value: int | None) -> str:
    return "n/a" if value is None else f"{value / 2**20:,.1f} MiB"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="1,000 tasks: checks the script runs")
    parser.add_argument("--sizes", type=int, nargs="+", help="pending tasks (default 100k 1M)")
    parser.add_argument("--aps-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.aps_child is not None:
        aps_child(args.aps_child)
        return 0
    sizes = [1_000] if args.smoke else args.sizes or [100_000, 1_000_000]
    version = APSCHEDULER
    rows = []
    with tempfile.TemporaryDirectory(prefix="taskgui-bench-memory-") as tmp:
        folder = Path(tmp)
        base, _ = daemon_rss(folder / "empty", folder / "empty.sqlite3")
        aps_base = aps_rss(0) if version else None
        for size in sizes:
            db = folder / f"tasks-{size}.sqlite3"
            seed_database(db, size)
            ours, loaded = daemon_rss(folder / f"daemon-{size}", db)
            db.unlink()
            theirs = aps_rss(size) if version else None
            rows.append((size, loaded, ours, theirs))
    print(
        f"bench_memory: Python {platform.python_version()} on {platform.machine()}; "
        f"APScheduler {version or 'not installed'}; load average {os.getloadavg()[0]:.2f}"
    )
    aps_empty = mib(aps_base["VmRSS"] if aps_base else None)
    print(f"empty process: taskgui daemon {mib(base['VmRSS'])}, APScheduler {aps_empty}")
    print()
    print(
        f"{'pending':>10}  {'taskgui daemon RSS':>20}  {'per task':>10}  "
        f"{'APScheduler RSS':>18}  {'per task':>10}  {'ratio':>7}  loaded in"
    )
    for size, loaded, ours, theirs in rows:
        per = (ours["VmRSS"] - base["VmRSS"]) / size
        their_rss = theirs["VmRSS"] if theirs else None
        their_per = "n/a"
        ratio = "n/a"
        if their_rss is not None and aps_base is not None:
            their_per = f"{(their_rss - aps_base['VmRSS']) / size:.0f} B"
            ratio = f"{ours['VmRSS'] / their_rss:.2f}x"
        print(
            f"{size:>10,}  {mib(ours['VmRSS']):>20}  {per:>8.0f} B  {mib(their_rss):>18}  "
            f"{their_per:>10}  {ratio:>7}  {loaded:.1f} s"
        )
    print()
    print("goal: the daemon's RSS at most half of APScheduler's memory store (ratio <= 0.50x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
