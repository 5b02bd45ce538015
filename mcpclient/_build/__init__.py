"""What builds clients from targets and options: ``connect``, the factory, ``SharedClient`` and the
option builders' registry it shares with the plug-ins."""
