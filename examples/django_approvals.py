"""A one-file Django project where a person approves an agent's tool calls from a staff page.

Set it up once, then serve it threaded (one thread waits for the answer while another takes
it)::

    python examples/django_approvals.py migrate
    python examples/django_approvals.py createsuperuser
    python examples/django_approvals.py runserver          # then log in at /login

or, as the tests do, ``gunicorn -w 1 -k gthread --threads 4 --pythonpath examples
django_approvals:application``. The database is ``APPROVALS_DB`` (a SQLite file, by default
``approvals.sqlite3`` in the current directory); it holds the staff accounts and sessions.

* ``POST /agent/run`` (JSON ``{"tool": ..., "arguments": {...}}``, logged in, with the CSRF
  token in ``X-CSRFToken``) is the agent's work: it calls the tool through the client of
  ``MCPCLIENT_SERVERS``, whose policy allows ``add`` and asks about everything else (the demo
  server's ``shout``). The request waits for the answer.
* ``GET /approvals`` is the staff page: each waiting call as inert text (the request's
  ``lines()``, escaped again by the template) with Allow and Deny buttons;
  ``POST /approvals/<id>`` answers (409 when it no longer waits).
* A call nobody answers is denied at ``WebApprovals(timeout=...)`` (here 120 s) or at its own
  deadline, whichever comes first; ``approvals.close()`` at shutdown denies what waits.

An approval page is a door to every tool the policy asks about, so it is guarded as one:

* the ``Host`` header is checked against ``ALLOWED_HOSTS`` (``CommonMiddleware`` asks for it
  on every request; a wrong one is a 400). Listening on 127.0.0.1 alone is no protection: a
  web page on a name its attacker rebinds to 127.0.0.1 (DNS rebinding) is the same origin as
  this page to the browser, and could read the waiting ids and post Allow;
* the staff views need a logged-in staff member (``staff_member_required``), the agent's view
  a logged-in user;
* every POST needs the CSRF token (``CsrfViewMiddleware``), and no page may be framed
  (``X-Frame-Options: DENY``: a framed page could be clicked through).

``WebApprovals`` lives in one process: run one worker process (many threads), or keep the
queue in the worker that makes the call.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import django
from django.conf import settings

from mcpclient import Plugins
from mcpclient.policy import Policy, Rule, ToolCallDenied, WebApprovals

DEMO_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "servers" / "demo_server.py")]

#: One queue per process: the agent's thread waits in it, the staff view answers from it.
approvals = WebApprovals(timeout=float(os.environ.get("APPROVAL_TIMEOUT", "120")))
policy = Policy([Rule("allow", annotations={"readOnlyHint": True}, name="reads"),
                 Rule("allow", tool="add", name="sums")], default="ask", approver=approvals)

LOGIN_PAGE = """<!DOCTYPE html><title>Log in</title>
<form method="post">{% csrf_token %}{{ form.as_p }}<button>Log in</button></form>"""

if not settings.configured:
    settings.configure(
        DEBUG=False,
        ROOT_URLCONF=__name__,
        ALLOWED_HOSTS=["127.0.0.1", "localhost", "[::1]"],  # the names this page is served as
        SECRET_KEY=os.environ.get("DJANGO_SECRET_KEY", "example-only-not-secret"),
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3",
                               "NAME": os.environ.get("APPROVALS_DB", "approvals.sqlite3")}},
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
        LOGIN_URL="/login",
        LOGIN_REDIRECT_URL="/approvals",
        X_FRAME_OPTIONS="DENY",
        SESSION_COOKIE_SAMESITE="Strict",
        CSRF_COOKIE_SAMESITE="Strict",
        MCPCLIENT_CHECK=False,  # manage.py commands (migrate) start no server
        MCPCLIENT_SERVERS={"default": {
            "target": os.environ["MCP_SERVER"].split() if os.environ.get("MCP_SERVER") else DEMO_SERVER,
            "timeout": 300, "plugins": Plugins(policy=policy)}},
    )
    django.setup()

from django.contrib.admin.views.decorators import staff_member_required  # noqa: E402
from django.contrib.auth.decorators import login_required  # noqa: E402
from django.contrib.auth.views import LoginView  # noqa: E402
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse  # noqa: E402
from django.template import engines  # noqa: E402
from django.urls import path  # noqa: E402
from django.views.decorators.http import require_GET, require_POST  # noqa: E402

from mcpclient.contrib.django import get_client  # noqa: E402

PAGE = engines["django"].from_string("""<!DOCTYPE html><title>Approvals</title>
<meta name="csrf-token" content="{{ csrf_token }}">
<h1>Tool calls waiting for you</h1>
{% for p in pending %}<form method="post" action="/approvals/{{ p.id }}">{% csrf_token %}
<pre>{% for line in p.lines %}{{ line }}
{% endfor %}</pre>
<button name="allow" value="yes">Allow</button> <button name="allow" value="no">Deny</button>
</form>{% empty %}<p>Nothing waits.</p>{% endfor %}""")


@login_required
@require_POST
def run(request: HttpRequest) -> JsonResponse:
    body = json.loads(request.body)
    try:
        result = get_client().call_tool(body["tool"], body.get("arguments", {}))
    except ToolCallDenied as exc:
        return JsonResponse({"outcome": "denied", "reason": exc.reason})
    return JsonResponse({"outcome": "ran", "text": result.text})


@staff_member_required(login_url="/login")
@require_GET
def pending(request: HttpRequest) -> HttpResponse:
    return HttpResponse(PAGE.render({"pending": approvals.pending()}, request))


@staff_member_required(login_url="/login")
@require_POST
def answer(request: HttpRequest, ident: str) -> HttpResponse:
    if not approvals.answer(ident, request.POST.get("allow") == "yes"):
        return HttpResponse("That call no longer waits (answered, or its deadline passed).", status=409)
    return HttpResponseRedirect("/approvals")


urlpatterns = [
    path("login", LoginView.as_view(template_name="login.html")),
    path("agent/run", run),
    path("approvals", pending),
    path("approvals/<str:ident>", answer),
]

from django.core.wsgi import get_wsgi_application  # noqa: E402

application = get_wsgi_application()

if __name__ == "__main__":
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
