"""The JSON-RPC engine: pending slots, the reader thread and the dispatch pool."""
