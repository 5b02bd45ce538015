"""A one-file Django project where a tool call waits for a person: the server's form is shown as a
web page, and the answer posted from it resumes the call.

Set it up once, then serve it::

    python examples/django_input.py migrate
    python examples/django_input.py createsuperuser
    MCP_TARGET=http://127.0.0.1:8000/mcp gunicorn -w 2 -k gthread --threads 4 --pythonpath examples \\
        django_input:application

then log in at /login and open /ask?message=Who+are+you%3F. The view calls the server's ``elicit``
tool with ``on_input="return"``: when the server asks for a form, the call returns a
``PendingInput`` instead of answering. The view keeps ``pending.to_json()`` in the user's
session and renders the form from the question's schema (the server's text goes through
Django's templates, escaped: no markup of the server's reaches the page). ``POST /answer``
reads the JSON back and calls ``client.resume(pending, answer)``; the result is shown.

* A 2026-07-28 server: the call's state travels in the session, signed with the client's
  ``Handlers(pending_key=...)`` (here derived from ``SECRET_KEY``), so any worker process
  resumes it, after a restart too, until it expires (15 minutes). A state changed in the
  session store, made with another key, for another server or other credentials is refused
  before anything is sent (a 409 page: start again).
* A legacy server asks on the open connection: the call is held in the worker that made it, up
  to ``MCP_HOLD`` seconds (the call's ``timeout``). Run one worker process (many threads) for
  it; another process answers "start again" (409). A client holds one such call at a time (the
  server's request does not say which call it is for, so while one is held every question of
  the server goes to it): here one per worker, so give each user a client of their own
  (``mcpclient.ClientPool``) where several people use these pages at once.

``MCP_TARGET`` is the server (a URL, or a command line), ``MCP_PROTOCOL`` the era ("auto", or
"legacy" to force the handshake era); the database is ``INPUT_DB`` (SQLite, by default
``input.sqlite3``). The pages are guarded like the other examples': ``Host`` checked against
``ALLOWED_HOSTS``, a login for every view, the CSRF token on every POST, no framing.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import sys
from typing import Any

import django
from django.conf import settings

import mcpclient

MCP_TARGET = os.environ.get("MCP_TARGET", "http://127.0.0.1:8000/mcp")
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "example-only-not-secret")
#: The key that signs a PendingInput's JSON: the same in every worker, secret like SECRET_KEY.
PENDING_KEY = hashlib.sha256(b"mcpclient PendingInput\0" + SECRET_KEY.encode()).digest()

LOGIN_PAGE = """<!DOCTYPE html><title>Log in</title>
<form method="post">{% csrf_token %}{{ form.as_p }}<button>Log in</button></form>"""

FORM_PAGE = """<!DOCTYPE html><title>The server asks</title>
<p id="worker">worker {{ worker }}</p>
<form method="post" action="/answer" id="answer">{% csrf_token %}
{% for question in questions %}<fieldset>
  <legend class="message">{{ question.message }}</legend>
  {% for field in question.fields %}<p><label>{{ field.label }}
    {% if field.kind == "choice" %}<select name="{{ question.key }}.{{ field.name }}">
      {% for value in field.choices %}<option>{{ value }}</option>{% endfor %}</select>
    {% elif field.kind == "boolean" %}<input type="checkbox" name="{{ question.key }}.{{ field.name }}">
    {% else %}<input type="{% if field.kind == 'text' %}text{% else %}number{% endif %}"
      {% if field.kind == "number" %}step="any"{% endif %}
      name="{{ question.key }}.{{ field.name }}" value="{{ field.default }}"
      {% if field.required %}required{% endif %}>{% endif %}</label>
    <small>{{ field.description }}</small></p>{% endfor %}
  {% if question.unsupported %}<p>This page cannot answer a {{ question.kind }} request: it will be declined.</p>{% endif %}
</fieldset>{% endfor %}
{% if error %}<p id="error">{{ error }}</p>{% endif %}
<button name="action" value="accept">Send</button>
<button name="action" value="decline" formnovalidate>Decline</button>
</form>"""

INDEX_PAGE = """<!DOCTYPE html><title>Ask</title>
<p><a href="/ask">Call the tool</a>: the server will ask you who you are.</p>"""

RESULT_PAGE = """<!DOCTYPE html><title>Result</title>
<p id="worker">worker {{ worker }}</p>
{% if error %}<p id="error">{{ error }}</p><p><a href="/ask">Start again</a></p>
{% else %}<pre id="result">{{ text }}</pre>{% endif %}"""


def target() -> str | list[str]:
    return MCP_TARGET if "://" in MCP_TARGET else shlex.split(MCP_TARGET)


if not settings.configured:
    settings.configure(
        DEBUG=False,
        ROOT_URLCONF=__name__,
        ALLOWED_HOSTS=["127.0.0.1", "localhost"],
        SECRET_KEY=SECRET_KEY,
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3",
                               "NAME": os.environ.get("INPUT_DB", "input.sqlite3")}},
        MIDDLEWARE=[
            "django.middleware.security.SecurityMiddleware",
            "django.contrib.sessions.middleware.SessionMiddleware",
            "django.middleware.common.CommonMiddleware",  # checks Host on every request
            "django.middleware.csrf.CsrfViewMiddleware",
            "django.contrib.auth.middleware.AuthenticationMiddleware",
            "django.middleware.clickjacking.XFrameOptionsMiddleware",
        ],
        INSTALLED_APPS=["django.contrib.auth", "django.contrib.contenttypes", "django.contrib.sessions"],
        TEMPLATES=[{"BACKEND": "django.template.backends.django.DjangoTemplates",
                    "OPTIONS": {"loaders": [("django.template.loaders.locmem.Loader", {
                        "login.html": LOGIN_PAGE, "index.html": INDEX_PAGE, "form.html": FORM_PAGE, "result.html": RESULT_PAGE})]}}],
        LOGIN_URL="/login",
        LOGIN_REDIRECT_URL="/",
        SESSION_COOKIE_SAMESITE="Strict",
        CSRF_COOKIE_SAMESITE="Strict",
    )
    django.setup()

from django.contrib.auth.decorators import login_required  # noqa: E402
from django.contrib.auth.views import LoginView  # noqa: E402
from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpRequest, HttpResponse  # noqa: E402
from django.shortcuts import render  # noqa: E402
from django.urls import path  # noqa: E402
from django.views.decorators.http import require_GET, require_POST  # noqa: E402

from mcpclient import MCPError, PendingInput, PendingInputRefused  # noqa: E402

#: One client per worker process, opened on first use and again after a fork. A site whose
#: users call with their own tokens makes it per user (``mcpclient.ClientPool``, see
#: examples/django_pool.py): a PendingInput is then bound to that user's credentials too.
client = mcpclient.SharedClient(target(), protocol=os.environ.get("MCP_PROTOCOL", "auto"), timeout=30,
                                handlers=mcpclient.Handlers(pending_key=PENDING_KEY))
#: How long a legacy server's call is held open for the person (the call's whole timeout).
HOLD = float(os.environ.get("MCP_HOLD", "300"))


def fields(schema: Any) -> list[dict[str, Any]]:
    """The inputs for a form's ``requestedSchema``: its properties, as plain values (escaped by the template)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    required = schema.get("required", []) if isinstance(schema, dict) else []
    shown = []
    for name, prop in (properties or {}).items():
        prop = prop if isinstance(prop, dict) else {}
        kind = {"integer": "number", "number": "number", "boolean": "boolean"}.get(prop.get("type"), "text")
        if isinstance(prop.get("enum"), list):
            kind = "choice"
        shown.append({"name": str(name), "label": str(prop.get("title") or name), "kind": kind,
                      "description": str(prop.get("description") or ""), "required": name in required,
                      "default": "" if prop.get("default") is None else str(prop["default"]),
                      "choices": [str(value) for value in prop.get("enum") or ()]})
    return shown


def content_of(question: Any, post: Any) -> dict[str, Any]:
    """What the person typed into ``question``'s fields, typed as its schema says."""
    content: dict[str, Any] = {}
    for field in fields(question.schema):
        raw = post.get(f"{question.key}.{field['name']}")
        if field["kind"] == "boolean":
            content[field["name"]] = raw is not None
        elif raw in (None, ""):
            continue  # left empty: the schema's default, or a "required" error from resume
        elif field["kind"] == "number":
            try:
                number = float(raw)
            except ValueError:
                content[field["name"]] = raw  # resume says what is wrong with it
            else:
                content[field["name"]] = int(number) if number.is_integer() else number
        else:
            content[field["name"]] = raw
    return content


def show(request: HttpRequest, pending: PendingInput, error: str = "") -> HttpResponse:
    request.session["pending"] = pending.to_json()  # signed: a changed one is refused by resume
    questions = [{"key": q.key, "kind": q.kind, "message": q.message, "fields": fields(q.schema),
                  "unsupported": q.kind != "form"} for q in pending.questions.values()]
    return render(request, "form.html", {"questions": questions, "error": error, "worker": os.getpid()})


def outcome(request: HttpRequest, result: Any) -> HttpResponse:
    if isinstance(result, PendingInput):
        return show(request, result)  # the server asks again
    return render(request, "result.html", {"text": result.text, "worker": os.getpid()})


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "index.html")


@login_required
@require_GET
def ask(request: HttpRequest) -> HttpResponse:
    message = request.GET.get("message", "Who are you?")
    try:
        result = client.call_tool("elicit", {"message": message}, on_input="return", timeout=HOLD)
    except MCPError as exc:
        return render(request, "result.html", {"error": str(exc), "worker": os.getpid()}, status=502)
    return outcome(request, result)


@login_required
@require_POST
def answer(request: HttpRequest) -> HttpResponse:
    saved = request.session.pop("pending", None)
    if saved is None:
        return render(request, "result.html", {"error": "Nothing waits for an answer.", "worker": os.getpid()},
                      status=409)
    try:
        pending = PendingInput.from_json(saved)
        action = request.POST.get("action")
        answers = {key: {"action": "accept", "content": content_of(question, request.POST)}
                   if action == "accept" and question.kind == "form" else {"action": "decline"}
                   for key, question in pending.questions.items()}
        result = client.resume(pending, answers)
    except PendingInputRefused as exc:
        return render(request, "result.html", {"error": str(exc), "worker": os.getpid()}, status=409)
    except ValueError as exc:  # an answer that does not fit the form: show it again
        return show(request, pending, error=str(exc))
    except MCPError as exc:
        return render(request, "result.html", {"error": str(exc), "worker": os.getpid()}, status=502)
    return outcome(request, result)


urlpatterns = [
    path("login", LoginView.as_view(template_name="login.html")),
    path("", index),
    path("ask", ask),
    path("answer", answer),
]
application = get_wsgi_application()

if __name__ == "__main__":
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
