"""Sets of code points that Python's ``unicodedata`` does not expose, from Unicode's
own data files, for the tests that check taskgui's escapes against Unicode.

``DEFAULT_IGNORABLE_NOT_FORMAT``: Default_Ignorable_Code_Point (DerivedCoreProperties.txt)
less the format characters (Cf, which the tests take from ``unicodedata.category``) and
the unassigned ones: characters that draw nothing though they are marks (Mn: the
combining grapheme joiner, the Khmer inherent vowels, the Mongolian free variation
selectors, the variation selectors and their supplement) or letters (Lo: the Hangul
fillers). "back" U+3164 "up" or "back" U+FE0F "up" is drawn as "back up"/"backup".
"""

from __future__ import annotations

_RANGES = (
    (0x034F, 0x034F),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180D),
    (0x180F, 0x180F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFFA0, 0xFFA0),
    (0xE0100, 0xE01EF),
)
DEFAULT_IGNORABLE_NOT_FORMAT = frozenset(
    chr(code) for low, high in _RANGES for code in range(low, high + 1)
)
