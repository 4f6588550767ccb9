"""Keep the task dialog on its screen: the form scrolls, the buttons never move off.

With Advanced and Conditions & spread open the form is some 1,200 px tall, taller than
many laptop screens (a trial: 800 px, Create/Cancel below the bottom edge), and on a
small screen the window system squashed every field to make it fit. So the form lives
in a ``FormScroll`` and the buttons stay under it, outside; ``fit_to_screen`` opens
the dialog at the size the form asks for, but never larger than the part of its
screen that windows may use (``QScreen.availableGeometry``, without the panels).
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QRect, QSize, Qt
from PySide6.QtGui import QScreen
from PySide6.QtWidgets import QApplication, QFrame, QScrollArea, QSizePolicy, QStyle, QWidget

from taskgui.runtime.guard import never_raises

# Short enough for any screen, tall enough that the form can still be read and scrolled.
_MINIMUM_LINES = 6


class FormScroll(QScrollArea):
    """A frameless scroll area around the form that asks for the form's whole size.

    ``QScrollArea.sizeHint`` is capped at 36 x 24 lines, which would open the dialog
    scrolling on a screen with room to spare; this one asks for all of the form plus
    the vertical scroll bar's width, so the bar can appear without hiding a column or
    calling for a horizontal one. The form never gets less than its preferred height
    (its vertical size policy is ``Minimum``): when there is no room the area scrolls
    instead of squashing the fields. Narrower than the form's minimum width (a very
    small screen), it scrolls sideways too.
    """

    def __init__(self, form: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("form_scroll")
        form.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        self.setWidget(form)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        # Not a stop of its own for Tab: the fields in it are.
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        form.installEventFilter(self)
        # Whatever brings a field into focus (Tab, Shift+Tab from the buttons, a
        # mnemonic, a message's field) scrolls it into view; QScrollArea alone does so
        # only for a Tab that starts inside it.
        app = QApplication.instance()
        if isinstance(app, QApplication):
            app.focusChanged.connect(self._on_app_focus_changed)

    @never_raises("following the task form's size", default=False)
    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        # The form's relayout reaches only the viewport; the dialog's layout must hear
        # that this area now wants another size, or it keeps the old hint.
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.updateGeometry()
        return super().eventFilter(watched, event)

    @never_raises
    def _on_app_focus_changed(self, _old: QWidget | None, new: QWidget | None) -> None:
        form = self.widget()
        if new is not None and form is not None and form.isAncestorOf(new):
            self.ensureWidgetVisible(new)

    def _bar_width(self) -> int:
        return self.verticalScrollBar().sizeHint().width()

    def sizeHint(self) -> QSize:  # noqa: N802
        form = self.widget()
        if form is None:
            return super().sizeHint()
        hint = form.sizeHint().expandedTo(form.minimumSizeHint())
        frame = 2 * self.frameWidth()
        return QSize(hint.width() + self._bar_width() + frame, hint.height() + frame)

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        form = self.widget()
        if form is None:
            return super().minimumSizeHint()
        frame = 2 * self.frameWidth()
        lines = _MINIMUM_LINES * self.fontMetrics().lineSpacing()
        return QSize(form.minimumSizeHint().width() + self._bar_width() + frame, lines + frame)


def frame_allowance(window: QWidget) -> QSize:
    """What the window system adds around ``window`` (title bar, borders).

    Known once the window has been shown; before that, the style's title bar height
    stands in for it, so a first opening does not put the bottom edge under a panel.
    """
    frame = window.frameGeometry().size() - window.geometry().size()
    if window.testAttribute(Qt.WidgetAttribute.WA_WState_Created) and (
        frame.width() > 0 or frame.height() > 0
    ):
        return frame
    title = window.style().pixelMetric(QStyle.PixelMetric.PM_TitleBarHeight, None, window)
    return QSize(0, title)


def fit_to_screen(window: QWidget, minimum_width: int, *, grow_only: bool = False) -> None:
    """Size ``window`` to its layout's wish, within its screen's available geometry.

    The minimum width is lowered on a screen narrower than it, so that a small screen
    gets a dialog that scrolls sideways rather than one wider than the screen.
    ``grow_only`` (a section was opened) lets the window grow towards the size it now
    wants, and never shrinks it under the person's pointer.
    """
    # Sections opened before the first show, or just now, have relayouts pending (posted
    # events): until they run, the form's size hint is the old one.
    QCoreApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest)
    screen = _screen_to_open_on(window)
    room = screen.availableGeometry().size() - frame_allowance(window)
    window.setMinimumWidth(min(minimum_width, room.width()))
    wanted = window.sizeHint().expandedTo(window.minimumSize())
    if grow_only:
        wanted = wanted.expandedTo(window.size())
    window.resize(wanted.boundedTo(room))
    if window.isVisible():  # grown where it stands: pull it back inside the screen
        _keep_inside(window, screen.availableGeometry())


def _screen_to_open_on(window: QWidget) -> QScreen:
    """The screen ``window`` is on, or will be: a dialog not yet placed opens over its
    parent (``QDialog.adjustPosition``), but at its first show its own handle is still
    on the primary screen. Sized for that one, a dialog over a window on a smaller
    second screen was taller than that screen (a review)."""
    parent = window.parentWidget()
    if parent is not None and not window.testAttribute(Qt.WidgetAttribute.WA_Moved):
        return parent.window().screen()
    return window.screen()


def _keep_inside(window: QWidget, area: QRect) -> None:
    frame = window.frameGeometry()
    x = max(area.left(), min(frame.x(), area.right() + 1 - frame.width()))
    y = max(area.top(), min(frame.y(), area.bottom() + 1 - frame.height()))
    if (x, y) != (frame.x(), frame.y()):
        window.move(x, y)  # move() places the frame's corner, as frameGeometry reports it
