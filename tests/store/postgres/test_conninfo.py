"""libpq's keyword/value DSN (``host=db dbname=taskgui``) as ``--db`` / TASKGUI_DB.

A trial gave ``--db 'host=127.0.0.1 dbname=test user=root password=x'``: it was taken
for a file name and a SQLite file literally named so was made. ``conninfo`` reads the
form as libpq does; the reference here is libpq itself (psycopg's ``conninfo_to_dict``
and ``Conninfo.get_defaults``), not a second model written for the test.
"""

from __future__ import annotations

import pytest
from psycopg import pq
from psycopg.conninfo import conninfo_to_dict

from taskgui.store.postgres import conninfo
from taskgui.store.postgres.connection import (
    is_dsn,
    password_left_out,
    place,
    redact,
    without_password,
)

WRITTEN = [
    "host=127.0.0.1 dbname=test user=root password=x",
    "host = h  dbname= 'my db' password='a b\\'c' port=5432",
    "password='x'host=y",  # a quoted value may touch the next keyword
    "password=a\\ b user=u",  # a bare value with an escaped space
    "host= dbname=x",  # libpq skips the space after "=": host is "dbname=x"
    "\tdbname=d\n user=u ",
    "user='' dbname=d",
    "dbname=d password=one password=two",  # the later one wins
]


@pytest.mark.parametrize("text", WRITTEN)
def test_settings_read_as_libpq_reads_them(text: str) -> None:
    assert {s.keyword: s.value for s in conninfo.parse(text)} == conninfo_to_dict(text)


def test_the_keywords_are_those_of_the_libpq_here() -> None:
    """Both ways: a keyword of this libpq that the list lacked (a review found 14 of
    libpq 16-18's) made ``load_balance_hosts=... password=...`` a file name."""
    known = {option.keyword.decode() for option in pq.Conninfo.get_defaults()}
    assert known <= conninfo.LIBPQ_KEYWORDS, f"libpq {pq.version()} knows more: update"
    assert conninfo.LIBPQ_KEYWORDS >= conninfo.SECRET_KEYWORDS


@pytest.mark.parametrize(
    "text",
    [
        "host=127.0.0.1 dbname=test user=root password=x",
        "dbname=taskgui",
        "service=shared",
        "hostaddr=10.0.0.1 port=5433",
        "host=x dbnme=y",  # a typo: libpq's 'invalid connection option' says so, no file
        "load_balance_hosts=disable host=127.0.0.1 password=secret dbname=nosuch",
        "require_auth=scram-sha-256 host=db",  # libpq 16's, first
        "newer_than_this_list=1 host=db",  # a keyword of a later libpq, beside a known one
        "password=s3cret",  # libpq's defaults for the rest
        "postgresql://h/d",
    ],
)
def test_a_keyword_value_string_names_a_database(text: str) -> None:
    assert is_dsn(text)


@pytest.mark.parametrize(
    "text",
    [
        "/home/me/taskgui.sqlite3",
        "backup=old.sqlite3",  # "backup" is no libpq keyword
        "a=b",
        "/tmp/host=x",  # a path: its first token is no keyword
        "host=a b.sqlite3",  # "b.sqlite3" has no "=": libpq would refuse it
        "dbname='unterminated",
        "postgresql.sqlite3",
        "",
    ],
)
def test_a_file_name_with_an_equals_sign_stays_a_file(text: str) -> None:
    assert not is_dsn(text)


@pytest.mark.parametrize(
    ("dsn", "shown", "kept"),
    [
        (
            "host=127.0.0.1 dbname=test user=root password=x",
            "host=127.0.0.1 dbname=test user=root password=***",
            "host=127.0.0.1 dbname=test user=root",
        ),
        (
            "password='s3 cr\\'et' host=h sslmode=require",
            "password=*** host=h sslmode=require",
            "host=h sslmode=require",
        ),
        ("password='x'host=y", "password=*** host=y", "host=y"),
        ("host=h sslpassword=k dbname=d", "host=h sslpassword=*** dbname=d", "host=h dbname=d"),
        ("host=h dbname=d", "host=h dbname=d", "host=h dbname=d"),
        # libpq refuses the case and quotes the string in its error: masked all the same
        ("host=h PASSWORD=s3cret", "host=h PASSWORD=***", "host=h"),
        (
            "host=h scram_client_key=k1 scram_server_key=k2",
            "host=h scram_client_key=*** scram_server_key=***",
            "host=h",
        ),
        # nothing but the password: still the shared schedule of libpq's defaults
        ("password=s3cret", "password=***", "postgresql://"),
        (
            "postgresql://u@h/d?sslpassword=k&application_name=a&SCRAM_CLIENT_KEY=c",
            "postgresql://u@h/d?sslpassword=***&application_name=a&SCRAM_CLIENT_KEY=***",
            "postgresql://u@h/d?application_name=a",
        ),
    ],
)
def test_a_keyword_value_password_is_masked_shown_and_left_out_on_disk(
    dsn: str, shown: str, kept: str
) -> None:
    assert redact(dsn) == shown
    assert password_left_out(dsn) == kept
    assert is_dsn(kept)  # a command's TASKGUI_DB and the autostart entry name it still
    settings = {key.lower() for key in conninfo_to_dict(kept)}
    assert not settings & conninfo.SECRET_KEYWORDS


def test_a_driver_message_loses_the_password_as_written_and_as_read() -> None:
    dsn = "host=h password='s3 cr\\'et'"
    text = "bad: 's3 cr\\'et' and s3 cr'et"
    assert without_password(text, dsn) == "bad: *** and ***"


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://ann:pw@db.lan/taskgui", "db.lan/taskgui"),
        ("postgresql://h:5433/x?password=pw", "h:5433/x"),
        ("host=127.0.0.1 dbname=test user=root password=x", "127.0.0.1/test"),
        ("hostaddr=10.0.0.1 port=5432 dbname='my db'", "10.0.0.1/my db"),
    ],
)
def test_the_place_of_a_dsn_names_host_and_database_only(dsn: str, shown: str) -> None:
    assert place(dsn) == shown
