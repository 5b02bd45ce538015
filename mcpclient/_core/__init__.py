"""The protocol core: errors, the wire and its models' converter, the eras, the engine and its
small parts (timeouts, cancel, races, bounded reads, redaction, text cleaning). Imports nothing above it."""
