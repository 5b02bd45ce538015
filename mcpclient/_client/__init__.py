"""The client: ``Client``, the conversation that speaks an era over the engine, the calls, the
handlers of server requests, notifications, subscriptions, pages, the seam that extensions plug into,
and the features the Client offers through declared interfaces."""
