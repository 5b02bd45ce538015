"""What builds clients from targets and options: ``connect``, the factory, ``open`` (a target to a
transport and options), ``SharedClient`` (its delegates made by construction) and what lets it travel
to other processes. It sits above the plug-ins, which it knows by name."""
