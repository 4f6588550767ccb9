"""What text a task's fields may hold, beyond their length: no NUL, something visible.

A NUL cannot reach a program (``execve`` ends every string at the first one), so a
name, key, folder or variable holding one would be stored and shown as something else
than what runs. A name made only of invisible characters (zero-width spaces, bidi
controls, a byte-order mark, Hangul fillers) looks like no name at all in every list,
and a person can neither find nor tell apart such tasks. Both are refused where the
value is built, so the CLI, the dialog and an import all say the same thing.
"""

from __future__ import annotations

import unicodedata

# Letters and symbols that draw nothing; Unicode files them as visible (Lo, So), so
# the category alone does not catch them.
_BLANK_GLYPHS = frozenset(
    {
        "\u115f",  # HANGUL CHOSEONG FILLER
        "\u1160",  # HANGUL JUNGSEONG FILLER
        "\u3164",  # HANGUL FILLER
        "\uffa0",  # HALFWIDTH HANGUL FILLER
        "\u2800",  # BRAILLE PATTERN BLANK
    }
)
# Letters (L), numbers (N), punctuation (P) and symbols (S) draw something; marks (M)
# only on top of another character; other (C) and separators (Z) draw nothing.
_VISIBLE_CATEGORIES = frozenset("LNPS")


def has_visible_character(text: str) -> bool:
    """True when ``text`` shows at least one character a person can see."""
    if text.isascii():  # the usual case: anything but whitespace and controls shows
        return any(" " < char < "\x7f" for char in text)
    return any(
        unicodedata.category(char)[0] in _VISIBLE_CATEGORIES and char not in _BLANK_GLYPHS
        for char in text
    )


def nul_problem(text: str, what: str) -> str | None:
    """The message for a NUL character in ``text`` (named ``what``), or None."""
    if "\0" in text:
        return f"{what} contains a NUL character, which no program can be given"
    return None


def shortened(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis last: what a message quotes of
    a value someone gave (a pasted page, a 100,000-character name, need not be echoed)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quoted(text: str, limit: int = 40) -> str:
    """``shortened(text)`` as Python writes a string: quotes, escapes and all."""
    return repr(shortened(text, limit))


def utf8_size(text: str) -> int:
    """Bytes ``text`` takes when handed to a program (UTF-8; lone surrogates as 3)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))
