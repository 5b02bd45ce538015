"""``_delegates.delegating``: what a class writes by hand is declared, and checked at once."""

from __future__ import annotations

import pytest

from mcpclient import Client
from mcpclient._build.delegates import delegating, public_members, sends


def test_the_public_members_are_read_from_the_class_with_its_properties():
    members = public_members(Client)
    assert isinstance(members["server_info"], property) and members["ping"] is Client.__dict__["ping"]
    assert not any(name.startswith("_") for name in members)
    assert sends(members["ping"]) and not sends(members["set_roots"])


def test_a_member_written_by_hand_but_not_declared_fails_when_the_class_is_made():
    with pytest.raises(TypeError, match=r"written but not declared: ping; declared but not written: close"):
        @delegating(Client, hand_written=("close",), retried=())
        class Shadowing:
            def ping(self) -> None:
                """Would be overwritten silently."""


def test_a_name_that_is_not_a_client_member_fails_when_the_class_is_made():
    with pytest.raises(TypeError, match=r"list_tool is not a public member of Client"):
        @delegating(Client, hand_written=(), retried=("list_tool",))
        class Typo:
            pass


def test_a_setting_declared_as_a_retried_request_fails_when_the_class_is_made():
    with pytest.raises(TypeError, match=r"set_roots takes no timeout: sends nothing"):
        @delegating(Client, hand_written=(), retried=("ping", "set_roots"))
        class Confused:
            pass
