"""The protocol eras: the legacy handshake (2024-11-05 to 2025-11-25) and the stateless 2026-07-28."""
