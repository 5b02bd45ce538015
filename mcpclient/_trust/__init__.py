"""Consent for project files: which checkout's servers the user agreed to run."""
