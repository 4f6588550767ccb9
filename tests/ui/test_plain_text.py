"""The plain-text rule's one module: what each helper makes of hostile text.

The widgets that use it are tested with hostile tasks in ``test_hostile_text``; this
checks the helpers against Qt itself: a tooltip renders, by Qt's own rule, to the
characters it was given; a title shows ``[*]``; a message box is plain and answers.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Callable

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor, QImage, QPainter, QTextLayout
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox, QWidget
from pytestqt.qtbot import QtBot

from taskgui.core.terminal_text import visible
from taskgui.ui.plain_text import (
    WORD_JOINER,
    ask_yes_no,
    critical,
    escape_markup,
    inert_markup,
    inform,
    isolated,
    left_to_right,
    plain_label,
    plain_tooltip,
    shown,
    shown_lines,
    warn,
    window_title,
)
from tests.helpers.rich_text import rendered
from tests.helpers.unicode_sets import DEFAULT_IGNORABLE_NOT_FORMAT

# Characters QTextDocument keeps as they are (it turns no-break spaces and Unicode
# line separators into plain ones, which says nothing about markup).
_TEXT = st.text(alphabet=st.sampled_from(list("<>&;/=\"' \t\nabcxyz#!?-é€\u202e")), max_size=60)


@given(_TEXT)
@example("\n<a>")  # Qt's HTML reader dropped a line break at either end of the paragraph
@example("<a>\n\n")
def test_a_tooltip_renders_as_exactly_its_text(text: str) -> None:
    tip = plain_tooltip(text)
    assert rendered(tip) == text


@pytest.mark.parametrize("text", ["", "echo hi", "a < b", "x & y", "line\n<b>two</b>"])
def test_text_qt_shows_as_plain_is_left_as_it_is(text: str) -> None:
    assert not GuiQt.mightBeRichText(text)
    assert plain_tooltip(text) == text
    assert plain_tooltip(None) is None


def test_rich_looking_text_becomes_an_escaped_paragraph() -> None:
    tip = plain_tooltip("<img src=/dev/zero>\n  two  spaces")
    assert tip == (
        '<p style="white-space:pre-wrap">\n&lt;img src=/dev/zero&gt;\n  two  spaces\n</p>'
    )
    assert escape_markup("<a href='x'>&</a>") == "&lt;a href='x'&gt;&amp;&lt;/a&gt;"


@pytest.mark.parametrize(
    "text", ["History — [*]", "[*][*] a", "a [*] b [*][*][*] c", "no marker", "[*"]
)
def test_a_window_title_shows_every_marker(qtbot: QtBot, text: str) -> None:
    widget = QWidget()
    qtbot.addWidget(widget)
    widget.setWindowTitle(window_title(text))
    widget.show()
    handle = widget.windowHandle()
    assert handle is not None and handle.title() == text


def test_inert_markup_reads_the_same_and_holds_no_tag_or_entity() -> None:
    text = "“<img src=/dev/zero>” &amp; &lt;b&gt;"
    inert = inert_markup(text)
    assert inert.replace(WORD_JOINER, "") == text
    assert not GuiQt.mightBeRichText(inert)
    assert "<i" not in inert and "&a" not in inert and "&l" not in inert


def test_a_plain_label_never_reads_markup(qtbot: QtBot) -> None:
    label = plain_label("<a href='https://example.com/'>x</a>", word_wrap=True)
    qtbot.addWidget(label)
    assert isinstance(label, QLabel) and label.wordWrap()
    assert label.textFormat() is Qt.TextFormat.PlainText
    assert not label.openExternalLinks()


def _press_when_shown(answer: QMessageBox.StandardButton, seen: list[QMessageBox]) -> None:
    box = QApplication.activeModalWidget()
    if isinstance(box, QMessageBox) and box.isVisible():
        seen.append(box)
        button = box.button(answer)
        assert button is not None
        button.click()
        return
    QTimer.singleShot(20, lambda: _press_when_shown(answer, seen))


@pytest.mark.parametrize(
    ("answer", "expected"),
    [(QMessageBox.StandardButton.Yes, True), (QMessageBox.StandardButton.No, False)],
)
def test_ask_yes_no_is_plain_and_says_what_was_pressed(
    qtbot: QtBot, answer: QMessageBox.StandardButton, expected: bool
) -> None:
    seen: list[QMessageBox] = []
    QTimer.singleShot(0, lambda: _press_when_shown(answer, seen))
    assert ask_yes_no(None, "Delete", "Delete “<b>x</b>”?") is expected
    [box] = seen
    assert box.textFormat() is Qt.TextFormat.PlainText
    assert box.text() == "Delete “<b>x</b>”?"
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.No)


@pytest.mark.parametrize(
    ("show", "icon"),
    [
        (warn, QMessageBox.Icon.Warning),
        (inform, QMessageBox.Icon.Information),
        (critical, QMessageBox.Icon.Critical),
    ],
)
def test_message_boxes_are_plain(
    qtbot: QtBot, show: Callable[[QWidget | None, str, str], None], icon: QMessageBox.Icon
) -> None:
    seen: list[QMessageBox] = []
    QTimer.singleShot(0, lambda: _press_when_shown(QMessageBox.StandardButton.Ok, seen))
    show(None, "taskgui", "<a href='https://example.com/'>x</a>")
    [box] = seen
    assert box.textFormat() is Qt.TextFormat.PlainText
    assert box.icon() is icon


# ------------------------------------------------------------ direction controls

# Unicode's own list (UAX #9, the explicit formatting characters), read from Python's
# Unicode database rather than written out here: `shown` must escape exactly these.
_EXPLICIT = frozenset({"LRE", "RLE", "LRO", "RLO", "PDF", "LRI", "RLI", "FSI", "PDI"})


# Format characters (Cf) that draw a mark of their own: Unicode's
# Prepended_Concatenation_Mark (PropList.txt), which Python's unicodedata does not
# expose; the CLI's test (tests/cli/test_terminal_escapes.py) leaves the same ones.
_DRAWN = {"\u0600", "\u0601", "\u0602", "\u0603", "\u0604", "\u0605", "\u06dd"}
_DRAWN |= {"\u070f", "\u0890", "\u0891", "\u08e2", "\U000110bd", "\U000110cd"}
# What the window keeps where they do their work (see core.terminal_text.window_visible):
# ZWNJ and ZWJ, which Persian, Indic and emoji sequences need; LRM, RLM, ALM, which
# right-to-left names need. Alone, as below, they do none and are escaped.
_KEPT = {"\u200c", "\u200d", "\u200e", "\u200f", "\u061c"}
# And the variation selectors and their kin (Mn), kept after a character they choose a
# form of (an emoji's VS16), escaped elsewhere; the Hangul fillers (Lo), always escaped.
_KEPT_SELECTORS = {c for c in DEFAULT_IGNORABLE_NOT_FORMAT if unicodedata.category(c) == "Mn"}


def test_shown_escapes_exactly_what_unicode_says_is_invisible_or_breaks_the_line() -> None:
    """Against Unicode's own categories, over every code point: every control (Cc: C0,
    DEL, C1), format character (Cf: the direction controls, the zero-width space, the
    BOM, the tags, ...), line and paragraph separator (Zl, Zp) and lone surrogate (Cs),
    but the five the window keeps and the marks that draw; and nothing assigned else
    (a reserved code point in a block of format characters, Cn, may be escaped)."""
    hidden = {"Cc", "Cf", "Zl", "Zp", "Cs"}
    escaped = {chr(code) for code in range(0x110000) if shown(chr(code)) != chr(code)}
    expected = {
        chr(code)
        for code in range(0x110000)
        if (unicodedata.category(chr(code)) in hidden or chr(code) in DEFAULT_IGNORABLE_NOT_FORMAT)
        and chr(code) not in _DRAWN
    }
    assert escaped >= _KEPT  # alone: they shape and order nothing
    assert sorted(expected - escaped) == []
    assert sorted(c for c in escaped - expected if unicodedata.category(c) != "Cn") == []
    explicit = {c for c in escaped if unicodedata.bidirectional(c) in _EXPLICIT}
    assert len(explicit) == 9  # every direction control is among them (all are Cf)
    assert shown("evil\u202eexe.txt") == "evil\\u202eexe.txt"  # as `taskgui list` prints it
    assert shown("back\u200bup\ufeff\U000e0041") == "back\\u200bup\\ufeff\\U000e0041"
    assert shown("גיבוי\u200f (יומי)") == "גיבוי\u200f (יומי)"  # marks stay: they reorder no letter
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"  # "mi-khaham", ZWNJ after "mi"
    assert shown(persian) == persian
    assert shown("👨\u200d👩\u200d👧") == "👨\u200d👩\u200d👧"  # one emoji: a family
    assert shown("\u0915\u094d\u200d\u0937") == "\u0915\u094d\u200d\u0937"  # a Devanagari half-form


@pytest.mark.parametrize("invisible", sorted(_KEPT))
def test_a_joiner_or_mark_with_nothing_to_do_is_shown(invisible: str) -> None:
    """Where a joiner joins nothing and a mark orders nothing, it only makes one name
    look like another: "back" ZWJ "up" beside a real "backup"."""
    escape = f"\\u{ord(invisible):04x}"
    assert shown(f"back{invisible}up") == f"back{escape}up"
    assert shown(f"{invisible}backup") == f"{escape}backup"
    assert shown(f"backup{invisible}") == f"backup{escape}"


@pytest.mark.parametrize("joiner", ["\u200c", "\u200d"])
def test_a_joiner_beside_a_letter_it_shapes_stays(joiner: str) -> None:
    arabic = f"backup \u0645{joiner}\u062e"
    assert shown(arabic) == arabic
    assert shown(f"\u0647{joiner}") == f"\u0647{joiner}"  # an Arabic letter's joining form
    assert shown(f"x{joiner}\u0645") == f"x\\u{ord(joiner):04x}\u0645"  # not beside Latin
    assert shown(f"back{joiner}up \u0645") == f"back\\u{ord(joiner):04x}up \u0645"


@pytest.mark.parametrize("mark", ["\u200e", "\u200f", "\u061c"])
def test_a_mark_in_right_to_left_text_stays(mark: str) -> None:
    hebrew = f"\u05d2\u05d9\u05d1\u05d5\u05d9!{mark}"  # the mark keeps the "!" after it
    assert shown(hebrew) == hebrew
    assert shown(f"backup{mark} é") == f"backup\\u{ord(mark):04x} é"  # no RTL letter


def _drawn(text: str) -> QImage:
    """What Qt paints for ``text`` on one line."""
    image = QImage(400, 40, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.drawText(4, 28, text)
    painter.end()
    return image


# Pairs of different names Qt draws alike (found by a review of the first rules).
_LOOKALIKES = [
    ("back\u200c\u200dup", "backup"),  # two joiners: each beside the other
    ("r\u00e9\u200dsum\u00e9", "r\u00e9sum\u00e9"),  # a joiner beside a Latin letter
    ("back\u200eup \u05d0", "backup \u05d0"),  # a mark between letters, RTL elsewhere
    ("back\u034fup", "backup"),  # the combining grapheme joiner
    ("back\ufe0fup", "backup"),  # a variation selector after a Latin letter
    ("back\U000e0100up", "backup"),  # the supplement's
    ("back\u3164up", "back up"),  # a Hangul filler
]


@pytest.mark.parametrize(("spoof", "real"), _LOOKALIKES)
def test_names_qt_draws_alike_are_shown_apart(qapp: QApplication, spoof: str, real: str) -> None:
    assert _drawn(spoof) == _drawn(real) or _drawn(spoof) == _drawn(real.replace(" ", "\u3164"))
    assert shown(spoof) != spoof
    assert _drawn(shown(spoof)) != _drawn(shown(real))


@pytest.mark.parametrize(
    "text",
    [
        "\u2764\ufe0f\u200d\U0001f525",  # heart on fire: VS16, then ZWJ
        "\U0001f468\u200d\U0001f469\u200d\U0001f467",
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",
        "\u0915\u094d\u200d\u0937",
        "\u061c-\u0663\u0664",  # the Arabic minus sign: ALM before Arabic-Indic digits
        "\u0663\u0664\u066a\u061c",
        "\u05d2\u05d9\u05d1\u05d5\u05d9!\u200f",
        "\u8fbb\U000e0100",  # a CJK ideograph's variant form
    ],
)
def test_text_that_needs_its_joiners_marks_and_selectors_keeps_them(text: str) -> None:
    assert shown(text) == text


def test_a_zero_width_space_no_longer_makes_two_names_look_the_same(qapp: QApplication) -> None:
    """Qt's own painting is the reference: raw, "back" ZWSP "up" is drawn as "backup"."""
    assert _drawn("back\u200bup") == _drawn("backup")  # the spoof works on a raw name
    assert _drawn(shown("back\u200bup")) != _drawn(shown("backup"))


def test_shown_writes_each_escape_as_the_cli_does() -> None:
    """One escape format: the window's is the CLI's (``core.terminal_text.visible``)."""
    for code in range(0x110000):
        char = chr(code)
        if shown(char) != char:
            assert shown(char) == visible(char), f"U+{code:04X}"
    assert shown("tab\there\nnext\r\x1b[2J\x85\u2028") == (
        "tab\\there\\nnext\\r\\x1b[2J\\x85\\u2028"
    )
    assert shown("back\\slash") == "back\\slash"  # a backslash stays: commands read as typed


def test_isolated_ascii_is_shown_on_one_line_without_an_isolate() -> None:
    assert isolated("tab\there\nnext") == "tab\\there\\nnext"
    assert isolated("plain name") == "plain name"


def test_shown_lines_keeps_tabs_and_line_ends_and_escapes_the_rest() -> None:
    """For a run's output or an error paragraph: several lines on purpose."""
    text = "col\tcol\nline\r\nnext\rover\x1b[31mred\x07 \u202eabc\u2028"
    assert shown_lines(text) == "col\tcol\nline\r\nnext\rover\\x1b[31mred\\x07 \\u202eabc\\u2028"
    assert shown_lines("plain\n") == "plain\n"


def _drawn_order(text: str) -> list[float]:
    """Where Qt draws each character of ``text`` (its x), in the order it is written."""
    layout = QTextLayout(text, QApplication.font())
    layout.beginLayout()
    line = layout.createLine()
    line.setLineWidth(10_000)
    layout.endLayout()
    # PySide6 returns (x, position) for cursorToX's in-out argument, typed as object.
    return [float(line.cursorToX(position)[0]) for position in range(len(text))]  # type: ignore[index]


def _reads_in_order(text: str) -> bool:
    xs = _drawn_order(text)
    return all(left < right for left, right in itertools.pairwise(xs))


def test_a_name_with_an_override_is_drawn_as_it_is_written(qapp: QApplication) -> None:
    """Qt's own layout is the reference: raw, the override reverses "exe.txt"."""
    spoof = "evil\u202eexe.txt"
    assert not _reads_in_order(spoof)  # the attack works on an unescaped name
    assert _reads_in_order(shown(spoof))
    sentence = f"Delete the task “{isolated(spoof)}” and its history?"
    assert _reads_in_order(sentence.replace("\u2068", "").replace("\u2069", ""))


def test_an_isolated_name_keeps_to_its_place_in_the_sentence(qapp: QApplication) -> None:
    """A right-to-left name cannot pull the number after it into its own run."""
    name = "גיבוי"
    loose = _drawn_order(f"“{name}” 2 of 3")
    kept = _drawn_order(f"“{isolated(name)}” 2 of 3")
    digit = len(f"“{name}” ")
    assert loose[digit] < loose[0]  # without the isolate "2" is drawn before the name
    assert kept[digit + 2] > kept[0]  # with it, after (the isolate adds two characters)


def test_a_sentence_that_begins_with_a_hebrew_name_is_laid_out_left_to_right(
    qapp: QApplication,
) -> None:
    """Qt's own layout: raw, "“גיבוי” failed" is a right-to-left paragraph ("failed"
    drawn left of the name); with ``left_to_right`` it reads as the sentence it is."""
    sentence = "“גיבוי” failed\n“גיבוי” works again"
    for line in sentence.splitlines():
        raw = _drawn_order(line)
        assert raw[line.index("f") if "f" in line else line.index("w")] < raw[0]
    for line in left_to_right(sentence).splitlines():
        assert line.startswith("\u200e")
        drawn = _drawn_order(line)
        assert drawn[1] < drawn[line.index("”")] < drawn[-1]  # quote, name, then the words
    assert left_to_right("“Backup” failed") == "“Backup” failed"
