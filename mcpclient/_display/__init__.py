"""The notebook display: how mcpclient's values look in Jupyter, and the gate their HTML goes through.

``html`` turns models into HTML (and, when imported, installs that renderer into the models:
``types.set_html_renderer``); ``sanitize`` is the sanitiser every HTML string passes. It
stands over the models alone: the client core never imports it (``import mcpclient``
installs a renderer that loads it the first time a value is shown), and the notebook extra,
MCP Apps' widget and the notebook approver show what they show through it.
"""
