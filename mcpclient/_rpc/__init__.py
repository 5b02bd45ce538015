"""The JSON-RPC engine over a transport: ids and pending slots, the reader thread, write
batching, and the dispatcher of what the server sends with its pool. Knows the transport
contract (``transports.base``), never the eras or the models."""
