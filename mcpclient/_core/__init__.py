"""The small parts everything stands on: the error tree, text cleaning, cancel tokens,
deadlines and timeouts, races, bounded reads, redaction, origins, private files, typed views.
Imports nothing of mcpclient."""
