"""The built-in features, each a plug-in of the public seam (``mcpclient.extensions``).

A module here may import the protocol core, the transports' public contract and
``mcpclient.extensions``; the client core (``mcpclient._client``) imports none of them. The
factory that turns ``Client``'s keyword options (``apps=True``, ``cache=...``, ``telemetry=...``)
into extension instances is the one place that knows them all.
"""
