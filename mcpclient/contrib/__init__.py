"""Small, optional glue between ``SharedClient`` and web frameworks or task queues.

Each module imports its framework only when imported itself: ``mcpclient.contrib.django``
(an app config), ``mcpclient.contrib.flask`` (an ``init_app`` extension) and
``mcpclient.contrib.celery`` (worker signals).
"""
