"""The Django and Flask helpers of ``ClientPool``: a request's key is its logged-in user, and a
request without one is refused before any client is made (issue #48)."""

from __future__ import annotations

import functools
from types import SimpleNamespace

import pytest

from mcpclient import ClientPool
from tests.test_pool import open_for


def test_the_django_key_is_the_users_pk_and_an_anonymous_request_is_refused():
    pytest.importorskip("django")
    from django.core.exceptions import PermissionDenied

    from mcpclient.contrib.django import user_key
    from mcpclient.contrib.django._pool import build_pool

    assert user_key(SimpleNamespace(user=SimpleNamespace(is_authenticated=True, pk=7))) == 7
    for request in (SimpleNamespace(user=SimpleNamespace(is_authenticated=False, pk=None)), SimpleNamespace()):
        with pytest.raises(PermissionDenied):
            user_key(request)
    pool, key = build_pool({"factory": "tests.test_pool.open_for", "key": "tests.test_pool.token_of",
                            "max_clients": 3})
    assert isinstance(pool, ClientPool) and pool.max_clients == 3 and key("ann") == "token-of-ann"
    with pytest.raises(TypeError, match="'factory'"):
        build_pool({"max_clients": 3})


def test_the_flask_key_is_g_user_its_get_id_or_id_and_a_request_without_one_is_a_401():
    flask = pytest.importorskip("flask")
    from werkzeug.exceptions import Unauthorized

    from mcpclient.contrib.flask import MCPPool, user_key

    app = flask.Flask("pool_helpers")
    pool = MCPPool(functools.partial(open_for, "http://127.0.0.1:9/mcp"), app, max_clients=2)
    with app.test_request_context():
        with pytest.raises(Unauthorized):
            user_key()
        flask.g.user = SimpleNamespace(get_id=lambda: "7", id=8)
        assert user_key() == "7"
        flask.g.user = SimpleNamespace(id=8)
        assert user_key() == 8
        flask.g.user = "ann"
        assert pool.client.key == "ann" and pool.pool is MCPPool.for_app(app) and pool.pool.max_clients == 2
