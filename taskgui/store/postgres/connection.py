"""Opening a PostgreSQL connection, and turning psycopg's errors into store errors.

A DSN is either form libpq takes: a URI (``postgresql://...``) or a keyword/value string
(``host=db dbname=taskgui``, see ``conninfo``). It may carry a password; that never
reaches a message, a log line or the database (``redact``). Credentials are libpq's
business: the DSN, ``~/.pgpass``, ``PG*`` variables and ``sslmode`` all work as libpq
has them, because the DSN goes to libpq unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

from taskgui.store.errors import StoreError
from taskgui.store.postgres import conninfo

if TYPE_CHECKING:
    import psycopg

DSN_PREFIXES = ("postgresql://", "postgres://")
CONNECT_TIMEOUT_S = 5
# How often the server checks a silent client is still there, and the client the
# server: a node whose network went away must be noticed within seconds, not the
# kernel's two hours of TCP keep-alive.
_KEEPALIVE = {
    "keepalives": 1,
    "keepalives_idle": 5,
    "keepalives_interval": 2,
    "keepalives_count": 3,
}


class PostgresUnavailableError(StoreError):
    """The server cannot be reached (or psycopg is not installed)."""

    environment = True
    unreachable = True


class PostgresConnectionLostError(PostgresUnavailableError):
    """The connection broke during a statement; the next call reconnects."""


def is_dsn(value: str) -> bool:
    """Whether ``--db`` / TASKGUI_DB names a PostgreSQL database rather than a file: a
    URI, or a keyword/value string (which was taken for a file name, and created)."""
    return value.startswith(DSN_PREFIXES) or conninfo.is_keyword_value(value)


def _is_uri(dsn: str) -> bool:
    return dsn.startswith(DSN_PREFIXES)


# Group 1 what goes before the password, group 2 the password itself.
_PASSWORD_IN_URL = re.compile(r"^(postgres(?:ql)?://[^:/@?#]*):([^@/?#]*)@")
# A secret in a URI's query (``?password=...&sslpassword=...``): the same keywords as
# the keyword/value form's secrets, in any case.
_SECRET_KEYS = "|".join(sorted(conninfo.SECRET_KEYWORDS))
_PASSWORD_PARAM = re.compile(rf"((?<![\w])(?:{_SECRET_KEYS})=)([^&\s]*)", re.IGNORECASE)


def redact(dsn: str) -> str:
    """The DSN with any password replaced by ``***``: what a message may show."""
    if not _is_uri(dsn):
        return conninfo.masked(dsn)
    return _PASSWORD_PARAM.sub(r"\1***", _PASSWORD_IN_URL.sub(r"\1:***@", dsn))


def password_left_out(dsn: str) -> str:
    """The DSN with no password at all (not ``***``, which libpq would send as one): for
    a command line kept on disk, where libpq then finds it in ``~/.pgpass``."""
    if not _is_uri(dsn):
        return conninfo.secrets_left_out(dsn)
    without = _PASSWORD_IN_URL.sub(r"\1@", dsn)
    without = re.sub(rf"([?&])(?:{_SECRET_KEYS})=[^&]*&?", r"\1", without, flags=re.IGNORECASE)
    return without.rstrip("?&")


def psycopg_module() -> Any:
    """psycopg, or a PostgresUnavailableError that says how to install it."""
    try:
        import psycopg  # noqa: PLC0415 - optional: only a postgresql:// DSN needs it
    except ImportError:
        raise PostgresUnavailableError(
            "a postgresql:// database needs psycopg 3: pip install 'taskgui[postgres]'"
        ) from None
    return psycopg


def connect(dsn: str, *, application_name: str = "taskgui") -> psycopg.Connection[Any]:
    """An autocommit connection; each write opens its own transaction explicitly."""
    driver = psycopg_module()
    try:
        connection: psycopg.Connection[Any] = driver.connect(
            dsn,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT_S,
            application_name=application_name,
            **_KEEPALIVE,
        )
    except driver.Error as error:
        raise _cannot_connect(error, dsn) from None
    try:
        # No JIT compilation for this session: taskgui's statements are small and run
        # often, and on tables without statistics yet (a new schedule) the planner's
        # guesses passed ``jit_above_cost``: reading the nodes took 215-300 ms of
        # compiling where it runs in 0.8 ms (a review; every look of a window reads
        # them). Not ``options=-c jit=off``, which would replace options the DSN sets.
        connection.execute("SET jit = off")
    except driver.Error as error:
        if connection.broken:
            connection.close()
            raise _cannot_connect(error, dsn) from None
        # else a server without the setting (before PostgreSQL 11): left as it is
    return connection


def _cannot_connect(error: Exception, dsn: str) -> PostgresUnavailableError:
    reason = _first_line(error, dsn)
    return PostgresUnavailableError(
        f"cannot connect to {redact(dsn)}: {reason}; check that the server "
        "runs and the DSN, ~/.pgpass or the PG* variables are right",
        reason=reason,
    )


def place(dsn: str) -> str:
    """``HOST/DB`` (``HOST:PORT/DB`` off the default port): the database as a person
    names it, with no user or password, read from either form as libpq reads it. What
    is left out is libpq's default (the PG* variables, else the local server and a
    database named after the user)."""
    import os  # noqa: PLC0415 - only a shared schedule's window names its place

    from psycopg.conninfo import conninfo_to_dict  # noqa: PLC0415 - see psycopg_module

    try:
        parts = {key: str(value) for key, value in conninfo_to_dict(dsn).items()}
    except psycopg_module().Error:
        return redact(dsn)  # libpq will say what is wrong with it when it connects
    host = parts.get("host") or parts.get("hostaddr") or os.environ.get("PGHOST") or "localhost"
    port = parts.get("port") or os.environ.get("PGPORT") or "5432"
    user = parts.get("user") or os.environ.get("PGUSER", "")
    database = parts.get("dbname") or os.environ.get("PGDATABASE") or user
    return f"{host}{'' if port == '5432' else ':' + port}/{database}"


def _first_line(error: BaseException, dsn: str) -> str:
    """The driver's message, its first line, with the DSN's password taken out: libpq
    quotes what it could not parse ('in URI: "postgresql://ann:secret@[::1"', an
    'invalid percent-encoded token: "secret%PW"'), password and all."""
    text = str(error).strip().splitlines()
    return without_password(text[0], dsn) if text else type(error).__name__


def without_password(text: str, dsn: str) -> str:
    """``text`` with every form of the DSN's password in it (as written, and decoded
    from its percent escapes) replaced by ``***``, as ``redact`` shows the DSN."""
    from urllib.parse import unquote  # noqa: PLC0415 - only once a driver error is shown

    if _is_uri(dsn):
        found = [match.group(2) for match in (_PASSWORD_IN_URL.match(dsn),) if match]
        found += [match.group(2) for match in _PASSWORD_PARAM.finditer(dsn)]
        forms = {form for password in found for form in (password, unquote(password)) if form}
    else:  # as written (quoted, escaped) and as libpq read it
        settings = conninfo.secrets(dsn)
        forms = {form for one in settings for form in (one.written(dsn), one.value) if form}
    for form in sorted(forms, key=len, reverse=True):  # the longest first: none is cut
        text = text.replace(form, "***")
    return text


@contextmanager
def translate_errors(dsn: str) -> Iterator[None]:
    """psycopg errors as StoreErrors a person can act on (the DSN shown redacted)."""
    driver = psycopg_module()
    try:
        yield
    except driver.OperationalError as error:
        raise_lost(dsn, error)
    except driver.Error as error:
        raise StoreError(f"the database {redact(dsn)} refused: {_first_line(error, dsn)}") from None


def raise_lost(dsn: str, error: BaseException) -> NoReturn:
    reason = _first_line(error, dsn)
    raise PostgresConnectionLostError(
        f"lost the connection to {redact(dsn)}: {reason}", reason=reason
    ) from None
