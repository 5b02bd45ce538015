"""A one-file Django project whose users each call an MCP server with their own token: a client
per user, from ``settings.MCPCLIENT_POOL`` and the ``mcpclient.contrib.django`` app.

Set it up once, then serve it threaded, in several processes::

    python examples/django_pool.py migrate
    python examples/django_pool.py createsuperuser
    MCP_URL=http://127.0.0.1:8000/mcp MCP_TOKENS='{"admin": "<admin'"'"'s token>"}' \\
        gunicorn --preload -w 2 -k gthread --threads 4 --pythonpath examples django_pool:application

then log in at /login and open /whoami?tag=hello. ``client_for(request)`` is the client of
``request.user``: the first request of a user opens it with ``client_for_user(pk)``, which sends
that user's token and nobody else's; later requests reuse it. At most ``POOL_SIZE`` clients are
open per worker process (the least recently used idle one makes room), one idle for
``POOL_IDLE`` seconds is closed, and ``POST /logout`` closes the user's. The result cache is one
``FileStore`` for every worker (``MCP_CACHE_DIR``): a private result is kept for the user whose
credentials fetched it, and served to nobody else. An anonymous request gets a 403.

``MCP_TOKENS`` (user name to token) stands in for the tokens your app keeps per user (an OAuth
grant, say); the database is ``POOL_DB`` (a SQLite file, by default ``pool.sqlite3``).
"""

from __future__ import annotations

import json
import os
import sys

import django
from django.conf import settings

import mcpclient
from mcpclient.cache import FileStore

MCP_URL = os.environ.get("MCP_URL", "http://127.0.0.1:8000/mcp")
TOKENS: dict[str, str] = json.loads(os.environ.get("MCP_TOKENS", "{}"))
#: One store for every worker, made before gunicorn forks them (``--preload``).
STORE = FileStore(os.environ["MCP_CACHE_DIR"]) if os.environ.get("MCP_CACHE_DIR") else True

LOGIN_PAGE = """<!DOCTYPE html><title>Log in</title>
<form method="post">{% csrf_token %}{{ form.as_p }}<button>Log in</button></form>"""


def client_for_user(pk: int) -> mcpclient.Client:
    """The pool's factory: the client of the user ``pk``, which sends that user's token only.

    It runs on a thread of its own (the pool's open), so it closes the database connection it
    opened there."""
    from django.contrib.auth import get_user_model
    from django.db import connections

    try:
        name = get_user_model().objects.get(pk=pk).get_username()
    finally:
        connections.close_all()  # this thread's connections only
    return mcpclient.connect(MCP_URL, http=mcpclient.HTTP(headers={"Authorization": f"Bearer {TOKENS[name]}"}),
                             plugins=mcpclient.Plugins(cache=STORE), timeout=10)


if not settings.configured:
    settings.configure(
        DEBUG=False,
        ROOT_URLCONF=__name__,
        ALLOWED_HOSTS=["127.0.0.1", "localhost"],
        SECRET_KEY=os.environ.get("DJANGO_SECRET_KEY", "example-only-not-secret"),
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3",
                               "NAME": os.environ.get("POOL_DB", "pool.sqlite3")}},
        MIDDLEWARE=[
            "django.middleware.security.SecurityMiddleware",
            "django.contrib.sessions.middleware.SessionMiddleware",
            "django.middleware.common.CommonMiddleware",  # checks Host on every request
            "django.middleware.csrf.CsrfViewMiddleware",
            "django.contrib.auth.middleware.AuthenticationMiddleware",
            "django.middleware.clickjacking.XFrameOptionsMiddleware",
        ],
        INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes", "django.contrib.sessions",
                        "mcpclient.contrib.django"],
        TEMPLATES=[{"BACKEND": "django.template.backends.django.DjangoTemplates",
                    "OPTIONS": {"loaders": [("django.template.loaders.locmem.Loader", {"login.html": LOGIN_PAGE})]}}],
        LOGIN_REDIRECT_URL="/whoami",
        SESSION_COOKIE_SAMESITE="Strict",
        CSRF_COOKIE_SAMESITE="Strict",
        MCPCLIENT_POOL={
            "factory": client_for_user,  # in a project: "myapp.mcp.client_for_user"
            "max_clients": int(os.environ.get("POOL_SIZE", "32")),
            "idle_timeout": float(os.environ.get("POOL_IDLE", "300")),
        },
    )
    django.setup()

from django.contrib.auth import logout as end_session  # noqa: E402
from django.contrib.auth.views import LoginView  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpRequest, JsonResponse  # noqa: E402
from django.urls import path  # noqa: E402
from django.views.decorators.http import require_GET, require_POST  # noqa: E402

from mcpclient import MCPError  # noqa: E402
from mcpclient.contrib.django import client_for, get_pool  # noqa: E402


@require_GET
def whoami(request: HttpRequest) -> JsonResponse:
    client = client_for(request)  # request.user's (PermissionDenied, a 403, without one)
    try:
        text = client.call_tool("whoami", {"tag": request.GET.get("tag", "")}).text
        profile = client.read_resource("user://me")[0].text
    except MCPError as exc:
        return JsonResponse({"error": str(exc).splitlines()[0]}, status=502)
    return JsonResponse({"text": text, "profile": profile, "worker": os.getpid()})


@require_POST
def logout(request: HttpRequest) -> JsonResponse:
    if request.user.is_authenticated:
        get_pool().discard(request.user.pk)  # its token leaves this process with it
    end_session(request)
    return JsonResponse({"user": None})


def pool_stats(request: HttpRequest) -> JsonResponse:
    return JsonResponse(get_pool().stats())  # counts only: no user, no token


urlpatterns = [
    path("login", LoginView.as_view(template_name="login.html")),
    path("logout", logout),
    path("whoami", whoami),
    path("healthz/mcp-pool", pool_stats),
]
application = get_wsgi_application()

if __name__ == "__main__":
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
