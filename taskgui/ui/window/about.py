"""Help > About taskgui: which version this is, and where its files are.

What a person needs when something is wrong: the version to report, the database the
window shows (to back it up, or to point the CLI at it) and the log file (what went
wrong, in full), and where the README is.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox, QWidget

# The homepage the AppStream metainfo names (packaging/linux).
README_URL = "https://github.com/taskgui/taskgui#readme"


def about_html(version: str, database: str, log_file: str) -> str:
    """The About text; paths are escaped, since a folder name may hold ``<`` or ``&``."""
    log = html.escape(log_file) if log_file else "not written (logging to stderr only)"
    return (
        f"<h3>taskgui {html.escape(version)}</h3>"
        "<p>A desktop task scheduler: commands on a schedule, with priorities, "
        "retries and a durable history.</p>"
        f"<p><b>Database:</b> {html.escape(database) or 'none'}<br>"
        f"<b>Log file:</b> {log}</p>"
        f'<p><a href="{README_URL}">README</a>: how to use it, from the command line too.</p>'
    )


def show_about(parent: QWidget, version: str, database: str, log_file: str) -> QMessageBox:
    """Show the About box (not modal) and return it."""
    box = QMessageBox(parent)
    box.setWindowTitle("About taskgui")
    box.setTextFormat(Qt.TextFormat.RichText)
    box.setText(about_html(version, database, log_file))
    box.setTextInteractionFlags(
        Qt.TextInteractionFlag.TextBrowserInteraction | Qt.TextInteractionFlag.TextSelectableByMouse
    )
    box.setIconPixmap(parent.windowIcon().pixmap(64, 64))
    box.setStandardButtons(QMessageBox.StandardButton.Close)
    box.setWindowModality(Qt.WindowModality.NonModal)
    box.show()
    return box
