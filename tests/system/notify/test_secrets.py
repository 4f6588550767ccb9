"""The mail password in a Secret Service keyring, on a private D-Bus session bus."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from taskgui.system.notify.channel import ChannelError
from taskgui.system.notify.secrets import SecretServiceStore
from tests.helpers.jeepney_fakes import FakeKeyring
from tests.helpers.private_bus import private_bus


@pytest.fixture
def bus(tmp_path: Path) -> Iterator[str]:
    with private_bus() as address:
        yield address


@pytest.fixture
def keyring(bus: str) -> Iterator[FakeKeyring]:
    fake = FakeKeyring(bus)
    yield fake
    fake.close()


def test_a_stored_password_is_read_back_and_replaced_not_duplicated(
    bus: str, keyring: FakeKeyring
) -> None:
    store = SecretServiceStore("me@smtp.example.org", bus_address=bus)
    assert store.lookup() is None
    store.store("first ünï")
    store.store("second")
    assert store.lookup() == "second"
    [(attributes, value, _type)] = keyring.items.values()
    assert attributes == {"application": "taskgui", "account": "me@smtp.example.org"}
    assert value == b"second"
    assert SecretServiceStore("other@smtp.example.org", bus_address=bus).lookup() is None


def test_a_locked_keyring_is_reported_not_bypassed(bus: str, keyring: FakeKeyring) -> None:
    store = SecretServiceStore("me@host", bus_address=bus)
    store.store("pw")
    keyring.locked = True
    with pytest.raises(ChannelError, match="locked"):
        store.lookup()
    assert "GetSecrets" not in keyring.calls


def test_no_default_collection_is_a_clear_error(bus: str) -> None:
    fake = FakeKeyring(bus, with_default=False)
    try:
        with pytest.raises(ChannelError, match="no default collection"):
            SecretServiceStore("me@host", bus_address=bus).store("pw")
    finally:
        fake.close()


def test_a_session_without_a_keyring_says_so(bus: str) -> None:
    with pytest.raises(ChannelError, match="no keyring"):
        SecretServiceStore("me@host", bus_address=bus).lookup()


def test_no_bus_at_all_says_so(tmp_path: Path) -> None:
    store = SecretServiceStore("me@host", bus_address=f"unix:path={tmp_path / 'none'}")
    with pytest.raises(ChannelError, match="session bus"):
        store.lookup()


def test_a_nul_in_the_password_is_refused(bus: str, keyring: FakeKeyring) -> None:
    with pytest.raises(ChannelError, match="NUL"):
        SecretServiceStore("me@host", bus_address=bus).store("a\0b")
    assert keyring.items == {}
