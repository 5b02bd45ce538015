"""The protocol over the models: the wire (how the models look as MCP JSON) and the two eras
(what differs between the legacy handshake and the stateless 2026-07-28 protocol). Imports the
core and the models, nothing above them."""
