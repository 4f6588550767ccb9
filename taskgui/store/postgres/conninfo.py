"""libpq's keyword/value connection strings (``host=db dbname=taskgui user=ann``).

libpq takes two forms of connection string, the URI (``postgresql://...``) and the
keyword/value list, and ``--db`` / TASKGUI_DB take both. This module reads the second
the way libpq's ``conninfo_parse`` does (fe-connect.c), without importing the driver:
every start asks whether ``--db`` names a database or a file, and psycopg costs a third
of a second to import. Reading it here also gives where each value sits in the text,
which masking a password needs and a parsed dict (``conninfo_to_dict``) does not give.

The grammar, as libpq has it: ``keyword [space] = [space] value``, repeated, separated
by white space; a value is either bare (up to the next white space) or in single
quotes; in both a backslash takes the next character as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

# libpq's keywords (PQconndefaults), those of libpq 13 to 18 (the test compares them
# with the libpq psycopg brings). A string is a keyword/value one only when one of its
# keywords is one of these, so that a file name with an "=" in it
# (``backup=old.sqlite3``) stays a file name.
LIBPQ_KEYWORDS = frozenset(
    {
        "application_name", "channel_binding", "client_encoding", "connect_timeout",
        "dbname", "fallback_application_name", "gssdelegation", "gssencmode", "gsslib",
        "host", "hostaddr", "keepalives", "keepalives_count", "keepalives_idle",
        "keepalives_interval", "krbsrvname", "load_balance_hosts", "max_protocol_version",
        "min_protocol_version", "oauth_client_id", "oauth_client_secret", "oauth_issuer",
        "oauth_scope", "options", "passfile", "password", "port", "replication",
        "require_auth", "requirepeer", "scram_client_key", "scram_server_key", "service",
        "ssl_max_protocol_version", "ssl_min_protocol_version", "sslcert", "sslcertmode",
        "sslcompression", "sslcrl", "sslcrldir", "sslkey", "sslkeylogfile", "sslmode",
        "sslnegotiation", "sslpassword", "sslrootcert", "sslsni", "target_session_attrs",
        "tcp_user_timeout", "user",
    }
)  # fmt: skip
# Values that are secrets: never shown, never kept on disk (libpq finds the password in
# ~/.pgpass or PGPASSWORD instead). Matched in any case: libpq refuses ``PASSWORD=``
# (its keywords are lower case) and its error quotes the string, but the value is
# plainly meant as a secret all the same.
SECRET_KEYWORDS = frozenset(
    {"password", "sslpassword", "oauth_client_secret", "scram_client_key", "scram_server_key"}
)
_SPACE = " \t\n\r\f\v"  # C's isspace, which libpq uses


@dataclass(frozen=True, slots=True)
class Setting:
    """One ``keyword=value`` of the string, and where its parts are in the text."""

    keyword: str
    value: str  # as libpq reads it: quotes and backslashes taken away
    start: int  # of the keyword
    value_start: int  # of the value as written (its opening quote, if quoted)
    end: int  # just after the value as written

    def written(self, text: str) -> str:
        return text[self.value_start : self.end]


class ConninfoSyntaxError(ValueError):
    """Not a keyword/value string libpq would parse (the message says why, as libpq)."""


def parse(text: str) -> list[Setting]:
    """The settings of ``text`` in order; ConninfoSyntaxError where libpq would refuse
    the syntax. Unknown keywords are kept: libpq names them when it connects."""
    settings: list[Setting] = []
    at, size = 0, len(text)
    while True:
        while at < size and text[at] in _SPACE:
            at += 1
        if at == size:
            return settings
        start = at
        while at < size and text[at] != "=" and text[at] not in _SPACE:
            at += 1
        keyword = text[start:at]
        while at < size and text[at] in _SPACE:
            at += 1
        if at == size or text[at] != "=":
            raise ConninfoSyntaxError(f'missing "=" after "{keyword}"')
        at += 1
        while at < size and text[at] in _SPACE:
            at += 1
        value_start = at
        value, at = _quoted(text, at + 1) if text[at : at + 1] == "'" else _bare(text, at)
        settings.append(Setting(keyword=keyword, value=value, start=start,
                                value_start=value_start, end=at))  # fmt: skip


def _bare(text: str, at: int) -> tuple[str, int]:
    """An unquoted value from ``at``: up to white space, a backslash escaping."""
    chars: list[str] = []
    while at < len(text) and text[at] not in _SPACE:
        if text[at] == "\\":
            at += 1
            if at == len(text):
                break
        chars.append(text[at])
        at += 1
    return "".join(chars), at


def _quoted(text: str, at: int) -> tuple[str, int]:
    """A quoted value from just after its opening quote, to just after the closing one."""
    chars: list[str] = []
    while True:
        if at >= len(text):
            raise ConninfoSyntaxError("unterminated quoted string")
        if text[at] == "\\":
            at += 1
            if at < len(text):
                chars.append(text[at])
                at += 1
            continue
        if text[at] == "'":
            return "".join(chars), at + 1
        chars.append(text[at])
        at += 1


def is_keyword_value(text: str) -> bool:
    """Whether ``text`` is a keyword/value connection string: it parses as libpq parses
    it and one of its keywords is libpq's. An unknown keyword beside them (a typo, or
    one of a libpq newer than this list) still makes it one, so that the user reads
    libpq's 'invalid connection option', or connects, rather than finding a SQLite
    file named after the string (with the password in its name)."""
    try:
        settings = parse(text)
    except ConninfoSyntaxError:
        return False
    return any(setting.keyword in LIBPQ_KEYWORDS for setting in settings)


def secrets(text: str) -> list[Setting]:
    """The settings holding a secret (password, sslpassword...); none if unparsable."""
    try:
        return [s for s in parse(text) if s.keyword.lower() in SECRET_KEYWORDS]
    except ConninfoSyntaxError:
        return []


def masked(text: str) -> str:
    """``text`` with each secret value (quotes and all) written as ``***``."""
    for setting in reversed(secrets(text)):  # from the end: earlier offsets hold
        rest = text[setting.end :]
        # A quoted value may touch the next keyword ('x'host=h): keep them apart.
        gap = " " if rest and rest[0] not in _SPACE else ""
        text = f"{text[: setting.value_start]}***{gap}{rest}"
    return text


def secrets_left_out(text: str) -> str:
    """``text`` without its secret settings at all, keyword and value: ``***`` would be
    sent as the password, and libpq reads an absent one from ~/.pgpass. Nothing left
    (``password=x`` alone: libpq's defaults for the rest) is written as the URI of those
    defaults, ``postgresql://``: an empty ``--db`` would name the default file."""
    for setting in reversed(secrets(text)):
        text = f"{text[: setting.start]}{text[setting.end :].lstrip(_SPACE)}"
    return text.strip(_SPACE) or "postgresql://"


def value_of(text: str, keyword: str) -> str | None:
    """The last value given for ``keyword`` (libpq lets a later one win), or None."""
    try:
        found = [setting.value for setting in parse(text) if setting.keyword == keyword]
    except ConninfoSyntaxError:
        return None
    return found[-1] if found else None
