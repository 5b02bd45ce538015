"""MCP Apps (SEP-1865) as a built-in extension: ``Client(apps=True)`` adds ``extension.Apps``.

``views`` holds what a view is (``UIResource``, its Content Security Policy, the visibility
rule, the ``AppHost`` a shown view talks to); ``bridge`` the host side of the view protocol;
``widget`` the notebook output; ``result`` the ``AppResult``; ``extension`` the ``Apps``
extension that ties them to a client. The public names are in ``mcpclient.apps``. This
package's ``__init__`` imports none of them: the client core reads the ``views`` module only.
"""
