"""Guard against the PySide6 6.12.0 reference leak on CPython < 3.12.

PySide6 6.12.0 drops a reference to ``None`` on every void Qt call made from Python
(two per ``QTimer`` re-arm, one per ``Signal.emit()``). On CPython 3.11 ``None`` is an
ordinary refcounted object, so after a few thousand calls its count reaches zero and
the interpreter aborts with "Fatal Python error: none_dealloc". The scheduler re-arms
its timer on every head change, so this would kill the app within minutes; pyproject
pins PySide6 below 6.12 on 3.11 and this test proves the installed build is safe.

The workload runs in a child process because the failure mode is an abort, which would
take the whole pytest run with it. On 3.12+ ``None`` and ``True`` are immortal and their
counts are constants, which also passes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

TIMER_REARMS = 20_000
SIGNAL_EMITS = 1_000
POOL_TASKS = 10_000

CHILD_SCRIPT = textwrap.dedent(
    f"""
    import gc
    import json
    import sys

    from PySide6.QtCore import (
        QCoreApplication, QObject, QRunnable, Qt, QThreadPool, QTimer, Signal, Slot,
    )


    class Emitter(QObject):
        ticked = Signal(int)


    class Receiver(QObject):
        def __init__(self):
            super().__init__()
            self.count = 0

        @Slot(int)
        def on_ticked(self, value):
            self.count += 1


    class Tiny(QRunnable):
        def __init__(self, done):
            super().__init__()
            self.done = done

        def run(self):
            self.done.append(1)


    def refcounts():
        gc.collect()
        return {{"none": sys.getrefcount(None), "true": sys.getrefcount(True)}}


    app = QCoreApplication([])
    timer = QTimer()
    timer.setSingleShot(True)
    timer.setTimerType(Qt.TimerType.PreciseTimer)
    emitter = Emitter()
    receiver = Receiver()
    emitter.ticked.connect(receiver.on_ticked)
    pool = QThreadPool()
    done = []

    before = refcounts()

    for _ in range({TIMER_REARMS}):
        timer.start(1000)
    timer.stop()

    for i in range({SIGNAL_EMITS}):
        emitter.ticked.emit(i)

    for _ in range({POOL_TASKS}):
        pool.start(Tiny(done))
    pool.waitForDone()

    # One real turn of the event loop, so a timer actually fires and calls back.
    QTimer.singleShot(0, app.quit)
    app.exec()

    after = refcounts()
    print(json.dumps({{
        "before": before,
        "after": after,
        "slot_calls": receiver.count,
        "tasks_run": len(done),
    }}))
    """
)


def test_void_qt_calls_do_not_leak_references_to_none() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", CHILD_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, (
        f"child exited with {proc.returncode}; PySide6 may be leaking references to None "
        f"(6.12.0 on CPython < 3.12 does).\nstderr tail:\n{proc.stderr[-2000:]}"
    )

    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["slot_calls"] == SIGNAL_EMITS
    assert report["tasks_run"] == POOL_TASKS
    for name in ("none", "true"):
        before, after = report["before"][name], report["after"][name]
        assert after >= before, f"refcount of {name} fell from {before} to {after}"
