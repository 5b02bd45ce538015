"""The package's version, in a module of its own so that any module may import it (the package's
``__init__`` imports nearly everything, so importing the version from there closes a circle)."""

__version__ = "0.1.0.dev0"
