"""A node's default name: ``user@host``, the user being the account the process runs as."""

from __future__ import annotations

import os
import pwd
import socket

import pytest

from taskgui.runtime.cluster.node import default_node_name


def test_the_default_name_is_the_account_even_without_a_login_or_user_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A daemon started by systemd or cron has no terminal login and may have no USER:
    it was named by its bare uid ("0@vm", a trial)."""
    monkeypatch.delenv("USER", raising=False)
    monkeypatch.delenv("LOGNAME", raising=False)
    account = pwd.getpwuid(os.getuid()).pw_name
    assert default_node_name() == f"{account}@{socket.gethostname()}"
