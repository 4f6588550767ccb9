"""Text for a terminal: control characters made visible, never sent to the terminal.

A name, a command or a line of a crontab is written by whoever wrote the task or the
file (a crontab comment becomes a task name on import). Printed raw, an ESC sequence
in it moves the cursor, recolours or retitles the terminal, hides the rest of the line
or, on some terminals, answers back; a bidi override reorders what follows it so the
line reads differently from what it is. So the CLI's tables, ``show`` and the import
report pass every such text through ``visible``, and its JSON through
``visible_json``.

What is escaped: every C0 and C1 control and DEL (category Cc), the line and
paragraph separators, the bidi embedding, override, isolate and mark characters, the
characters that draw nothing at all (zero-width space, non-joiner and joiner, word
joiner and the invisible operators, the byte-order mark, the soft hyphen, the Mongolian
vowel separator, the interlinear annotation marks, the tag characters: ``back`` U+200B
``up`` printed raw reads "backup", and another task may be named that), and lone
surrogates (which cannot even be encoded for output). They are written the way Python
writes them: ``\\t``, ``\\n``, ``\\r``, ``\\x1b``, ``\\u202e``, ``\\U000e0041``. A
backslash is left alone, so commands read as typed; ``--json`` is the exact form.

The window (``ui.plain_text.shown``) writes the same escapes, through
``window_visible``, for a smaller set: see there why.
"""

from __future__ import annotations

import re
from unicodedata import bidirectional, category, name

__all__ = ["direction_visible", "visible", "visible_json", "window_visible"]

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}

# C0 but TAB, LINE FEED and CARRIAGE RETURN; those three; DEL and C1 (together: Cc).
_C0 = "\x00-\x08\x0b\x0c\x0e-\x1f"
_LINES_AND_TABS = "\t\n\r"
_DEL_C1 = "\x7f-\x9f"
# The implicit direction marks: ALM; LRM, RLM.
_MARKS = "\u061c\u200e\u200f"
# LINE and PARAGRAPH SEPARATOR with LRE..RLO; LRI..PDI; surrogates.
_SEPARATORS_DIRECTION = "\u2028-\u202e\u2066-\u2069\ud800-\udfff"
# ZERO WIDTH NON-JOINER and JOINER: they draw nothing, but shape the letters around them.
_JOINERS = "\u200c\u200d"
# Then what draws nothing: SOFT HYPHEN, MONGOLIAN VOWEL SEPARATOR, ZWSP, WORD JOINER
# and the invisible operators, BOM, the interlinear annotation marks, tags.
# The deprecated shaping controls, and the format controls of hieroglyphs, shorthand
# and music: every format character (Cf) but those that draw a mark (Arabic number
# signs and the like), the joiners and the marks.
_INVISIBLE = (
    "\u00ad\u180e\u200b\u2060-\u2064\u206a-\u206f\ufeff\ufff9-\ufffb"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f"
)
# The selectors, which are not format characters (Mn) but draw nothing either: the
# combining grapheme joiner, the Mongolian free variation selectors, the variation
# selectors (VS16 makes a heart an emoji) and their supplement (CJK forms).
_SELECTORS = "\u034f\u180b-\u180d\u180f\ufe00-\ufe0f\U000e0100-\U000e01ef"
# Letters that are blank (Lo): the Hangul fillers and the Khmer inherent vowels.
_BLANK_LETTERS = "\u115f\u1160\u17b4\u17b5\u3164\uffa0"
_HIDDEN = re.compile(
    f"[{_C0}{_LINES_AND_TABS}{_DEL_C1}{_MARKS}{_SEPARATORS_DIRECTION}{_JOINERS}{_INVISIBLE}"
    f"{_SELECTORS}{_BLANK_LETTERS}]"
)
# In JSON the C0 controls are already escaped by json.dumps; the rest is not.
_HIDDEN_IN_JSON = re.compile(
    f"[{_DEL_C1}{_MARKS}{_SEPARATORS_DIRECTION}{_JOINERS}{_INVISIBLE}{_SELECTORS}{_BLANK_LETTERS}]"
)
# The window's set (``window_visible``): the terminal's less what it keeps in context.
_HIDDEN_IN_WINDOW = re.compile(
    f"[{_C0}{_LINES_AND_TABS}{_DEL_C1}{_SEPARATORS_DIRECTION}{_INVISIBLE}{_BLANK_LETTERS}]"
)
_HIDDEN_IN_WINDOW_LINES = re.compile(
    f"[{_C0}{_DEL_C1}{_SEPARATORS_DIRECTION}{_INVISIBLE}{_BLANK_LETTERS}]"
)
# What the window keeps where it does its work (see window_visible).
_KEPT_IN_CONTEXT = re.compile(f"[{_JOINERS}{_MARKS}{_SELECTORS}]")
_JOINER_CHARS = frozenset(_JOINERS)
_SELECTOR = re.compile(f"[{_SELECTORS}]")
_MARK_CHARS = frozenset(_MARKS)
# Hebrew; Arabic, Syriac, Thaana; Arabic-Indic digits (UAX #9): what a mark orders.
_RIGHT_TO_LEFT = frozenset({"R", "AL", "AN"})


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _json_escape(match: re.Match[str]) -> str:
    """A character as JSON writes it: ``\\uXXXX``, as a surrogate pair past U+FFFF."""
    code = ord(match.group())
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


# The explicit bidi formatting characters alone (LRE..RLO, LRI..PDI): what reorders
# letters. The window writes these and keeps the rest (``ui.plain_text.shown``).
_DIRECTION = re.compile("[\u202a-\u202e\u2066-\u2069]")


def direction_visible(text: str) -> str:
    """``text`` with its bidi embeddings, overrides and isolates written as escapes."""
    return _DIRECTION.sub(_escape, text)


def window_visible(text: str, *, lines: bool = False) -> str:
    """``text`` as the window shows it: what ``visible`` escapes, but the joiners
    (ZWNJ, ZWJ) and the implicit direction marks (LRM, RLM, ALM) left in where they
    do their work.

    Why the sets differ: a terminal draws each character on its own and may have no
    shaping at all, so the CLI shows every invisible character, and an exact name
    can be read off it. The window's text goes through Qt's shaping and bidi engine,
    where those five do their work: ZWNJ keeps a Persian prefix ("mi-" in "mi-khaham")
    and Indic conjuncts apart, ZWJ joins emoji sequences (a family, a rainbow flag)
    and Indic half-forms, and an RLM or ALM keeps the punctuation of a Hebrew or
    Arabic name in place. Escaped, such names would read as noise; kept, none of them
    reverses a letter the way an override does.

    Where they have no such work they draw nothing, and then they only make one name
    look like another ("back" ZWJ "up" beside a real "backup"): so a joiner is kept
    only next to a character that is not ASCII (the letters it shapes, the emoji it
    joins), and a mark only in text that holds a right-to-left letter.

    ``lines``: text that is several lines on purpose (a run's output, an error
    paragraph) keeps its tabs and line ends (LF, CR LF, and a lone CR, which Qt's
    text panes also lay out as a line break).
    """
    shown = (_HIDDEN_IN_WINDOW_LINES if lines else _HIDDEN_IN_WINDOW).sub(_escape, text)
    if shown.isascii() or _KEPT_IN_CONTEXT.search(shown) is None:
        return shown
    right_to_left = any(  # RLM and ALM are of those classes themselves
        bidirectional(char) in _RIGHT_TO_LEFT and char not in _MARK_CHARS for char in shown
    )

    def in_context(match: re.Match[str]) -> str:
        char, start, end = match.group(), match.start(), match.end()
        before = shown[start - 1] if start else ""
        after = shown[end] if end < len(shown) else ""
        if char in _JOINER_CHARS:  # it shapes what is on either side of it
            while start > 1 and _SELECTOR.fullmatch(before):  # an emoji's VS16 goes with it
                start -= 1
                before = shown[start - 1]
            keep = (_shaped(before) or _shaped(after)) and not (
                _latin_or_hidden(before) or _latin_or_hidden(after)
            )
        elif char in _MARK_CHARS:  # it orders the neutrals and digits beside it
            keep = right_to_left and not (_is_letter(before) and _is_letter(after))
        else:  # a selector picks the form of the character before it
            keep = _shaped(before)
        return char if keep else _escape(match)

    return _KEPT_IN_CONTEXT.sub(in_context, shown)


def _shaped(char: str) -> bool:
    """A character a joiner or selector may work on: not ASCII, not a Latin letter
    (Latin needs neither: "ré" ZWJ "sumé" would pass for "résumé"), not one of them."""
    return bool(char) and not char.isascii() and not _latin_or_hidden(char)


def _latin_or_hidden(char: str) -> bool:
    if not char:
        return False
    if char.isascii():
        return char.isalpha()
    return bool(_KEPT_IN_CONTEXT.fullmatch(char)) or name(char, "").startswith("LATIN ")


def _is_letter(char: str) -> bool:
    """Between two letters a mark orders nothing (letters have their own direction)."""
    return bool(char) and category(char).startswith("L")


def visible(text: str) -> str:
    """``text`` with every control, separator and bidi character written as an escape."""
    return _HIDDEN.sub(_escape, text)


def visible_json(dumped: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) safe for a terminal.

    Those characters can only stand inside JSON strings, where ``\\uXXXX`` means the
    same character: the document decodes to exactly the same values.
    """
    return _HIDDEN_IN_JSON.sub(_json_escape, dumped)
