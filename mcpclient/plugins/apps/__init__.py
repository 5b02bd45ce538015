"""MCP Apps (SEP-1865) as a built-in extension: ``Plugins(apps=True)`` adds ``extension.Apps``.

What a view is (``UIResource``, its Content Security Policy, the visibility rule, the
``AppHost`` a shown view talks to) is in ``mcpclient._client.app_views``, below the client core,
since ``Client.read_ui_resource`` returns a ``UIResource``. Here: ``bridge`` the host side of
the view protocol; ``widget`` the notebook output; ``result`` the ``AppResult``;
``extension`` the ``Apps`` extension that ties them to a client. The public names are in
``mcpclient.apps``. This package's ``__init__`` imports none of them.
"""
