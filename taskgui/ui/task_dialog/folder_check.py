"""Whether a task's working directory is a folder, found without the GUI thread.

The dialog checks its fields at every change and every second (the schedule's ticker),
and a ``stat`` of a folder on a network mount that stopped answering blocks for as long
as the mount does: the dialog, and the window with it, would freeze. So the look is
made on a thread of its own and its answer comes back as a queued signal; until it
has come the dialog says nothing of the folder (a run would say it anyway). A path's
answer is kept for ``FRESH_FOR`` seconds, then looked at again, so a folder made while
the dialog is open stops being warned of. One look at a time per path: a hung one is
not asked again until it answers.

The answer travels on a carrier object (``_Answers``), not on the check itself: the
check goes with its dialog, and a look that ended after that emitted on a deleted
object ("Signal source has been deleted", raised on the looking thread; and a thread
emitting on an object the GUI thread is destroying is a race in Qt itself). The
carrier belongs to the application and goes once its check is gone and no look of it
is still under way.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable

import shiboken6
from PySide6.QtCore import QCoreApplication, QObject, Signal

FRESH_FOR = 2.0  # seconds an answer stands before the folder is looked at again

Look = Callable[[str], "str | None"]


def folder_warning(folder: str) -> str | None:
    """What to say of a working directory (a full path) that runs would fail to enter."""
    if os.path.isdir(folder):
        return None
    if os.path.exists(folder):
        return "this is a file, not a folder; runs fail until it is a folder"
    return "this folder does not exist; runs fail until it does"


class _Answers(QObject):
    """Carries one check's answers from the looking threads to the GUI thread, while
    that check is there; made on the GUI thread, owned by the application."""

    looked = Signal(str, object)  # path, warning: from a looking thread

    def __init__(self, check: FolderCheck) -> None:
        super().__init__(QCoreApplication.instance())
        self._check = weakref.ref(check)
        self.pending = 0  # looks under way (counted on the GUI thread only)
        self._check_gone = False
        self.looked.connect(self._on_looked)  # queued: emitted from the looking threads
        check.destroyed.connect(self._on_check_destroyed)

    def _on_looked(self, folder: str, warning: object) -> None:
        self.pending -= 1
        check = self._check()
        if not self._check_gone and check is not None and shiboken6.isValid(check):
            check.on_looked(folder, warning)
        self._go_when_done()

    def _on_check_destroyed(self) -> None:
        self._check_gone = True
        self._go_when_done()

    def _go_when_done(self) -> None:
        if self._check_gone and self.pending == 0:  # nothing more can be emitted on it
            self.deleteLater()


class FolderCheck(QObject):
    """The last known warning for each folder asked about; ``answered`` when a look
    ends (on the thread that owns this object: the dialog's)."""

    answered = Signal()

    def __init__(
        self,
        monotonic: Callable[[], float],
        parent: QObject | None = None,
        *,
        look: Look = folder_warning,
    ) -> None:
        super().__init__(parent)
        self._monotonic = monotonic
        self._look = look
        self._known: dict[str, tuple[str | None, float]] = {}  # path -> (warning, when)
        self._looking: set[str] = set()
        self._answers = _Answers(self)

    def warning(self, folder: str) -> str | None:
        """The warning for ``folder`` as last found (None while not yet known). Never
        waits: a look that is due is started on a thread and answers later."""
        known = self._known.get(folder)
        if (
            known is None or self._monotonic() - known[1] > FRESH_FOR
        ) and folder not in self._looking:
            self._looking.add(folder)
            self._answers.pending += 1
            threading.Thread(
                target=_look_on_a_thread,
                args=(self._look, folder, self._answers),
                name="folder-check",
                daemon=True,
            ).start()
        return None if known is None else known[0]

    def on_looked(self, folder: str, warning: object) -> None:
        """A look's answer, on the GUI thread (from ``_Answers``)."""
        self._looking.discard(folder)
        before = self._known.get(folder)
        self._known[folder] = (warning if isinstance(warning, str) else None, self._monotonic())
        if before is None or before[0] != warning:
            self.answered.emit()


def _look_on_a_thread(look: Look, folder: str, answers: _Answers) -> None:
    """The look, on its own thread; it holds no reference to the check that asked."""
    try:
        warning = look(folder)
    except Exception:  # an answer must come back, or the path is never asked again
        warning = None
    answers.looked.emit(folder, warning)
