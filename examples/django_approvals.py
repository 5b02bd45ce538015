"""A one-file Django project where a person approves an agent's tool calls from a staff page.

Approvals need a threaded server (one thread waits for the answer while another takes it):
``python examples/django_approvals.py runserver`` (threaded by default) and open
http://127.0.0.1:8000/approvals, or, as the tests do,
``gunicorn -w 1 -k gthread --threads 4 --pythonpath examples django_approvals:application``.

* ``POST /agent/run`` (JSON ``{"tool": ..., "arguments": {...}}``) is the agent's work: it calls
  the tool through the client of ``MCPCLIENT_SERVERS``, whose policy allows ``add`` and asks
  about everything else (the demo server's ``shout``). The request waits for the answer.
* ``GET /approvals`` is the staff page: each waiting call as inert text (the request's
  ``lines()``, escaped again by the template) with Allow and Deny buttons;
  ``POST /approvals/<id>`` answers (409 when it no longer waits).
* A call nobody answers is denied at ``WebApprovals(timeout=...)`` (here 120 s) or at its own
  deadline, whichever comes first; ``approvals.close()`` at shutdown denies what waits.

``WebApprovals`` lives in one process: run one worker process (many threads), or keep the
queue in the worker that makes the call. In a real project the staff views are decorated
with ``staff_member_required`` and keep Django's CSRF middleware; they are left bare here so
the file runs on its own, with no database.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import django
from django.conf import settings

from mcpclient.policy import Policy, Rule, ToolCallDenied, WebApprovals

DEMO_SERVER = [sys.executable, str(Path(__file__).resolve().parent / "servers" / "demo_server.py")]

#: One queue per process: the agent's thread waits in it, the staff view answers from it.
approvals = WebApprovals(timeout=float(os.environ.get("APPROVAL_TIMEOUT", "120")))
policy = Policy([Rule("allow", annotations={"readOnlyHint": True}, name="reads"),
                 Rule("allow", tool="add", name="sums")], default="ask", approver=approvals)

if not settings.configured:
    settings.configure(
        DEBUG=False,
        ROOT_URLCONF=__name__,
        ALLOWED_HOSTS=["127.0.0.1", "localhost", "testserver"],
        SECRET_KEY="example-only-not-secret",
        MIDDLEWARE=[],
        INSTALLED_APPS=["mcpclient.contrib.django"],
        TEMPLATES=[{"BACKEND": "django.template.backends.django.DjangoTemplates"}],
        MCPCLIENT_SERVERS={"default": {
            "target": os.environ["MCP_SERVER"].split() if os.environ.get("MCP_SERVER") else DEMO_SERVER,
            "timeout": 300, "policy": policy}},
    )
    django.setup()

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse  # noqa: E402
from django.template import engines  # noqa: E402
from django.urls import path  # noqa: E402
from django.views.decorators.http import require_POST  # noqa: E402

from mcpclient.contrib.django import get_client  # noqa: E402

PAGE = engines["django"].from_string("""<!DOCTYPE html><title>Approvals</title>
<h1>Tool calls waiting for you</h1>
{% for p in pending %}<form method="post" action="/approvals/{{ p.id }}">
<pre>{% for line in p.lines %}{{ line }}
{% endfor %}</pre>
<button name="allow" value="yes">Allow</button> <button name="allow" value="no">Deny</button>
</form>{% empty %}<p>Nothing waits.</p>{% endfor %}""")


@require_POST
def run(request: HttpRequest) -> JsonResponse:
    body = json.loads(request.body)
    try:
        result = get_client().call_tool(body["tool"], body.get("arguments", {}))
    except ToolCallDenied as exc:
        return JsonResponse({"outcome": "denied", "reason": exc.reason})
    return JsonResponse({"outcome": "ran", "text": result.text})


def pending(request: HttpRequest) -> HttpResponse:
    return HttpResponse(PAGE.render({"pending": approvals.pending()}))


@require_POST
def answer(request: HttpRequest, ident: str) -> HttpResponse:
    if not approvals.answer(ident, request.POST.get("allow") == "yes"):
        return HttpResponse("That call no longer waits (answered, or its deadline passed).", status=409)
    return HttpResponseRedirect("/approvals")


urlpatterns = [path("agent/run", run), path("approvals", pending), path("approvals/<str:ident>", answer)]

from django.core.wsgi import get_wsgi_application  # noqa: E402

application = get_wsgi_application()

if __name__ == "__main__":
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
