// Preload (`node --require tests/node/loopback.cjs ...`) used by the mcpclient
// test suite for every Node program it starts that opens TCP servers:
// server-everything (its `app.listen(PORT)` names no host and would bind all
// interfaces) and the conformance CLI (whose mock servers `listen(0)`).
//
// Every TCP listen() given a port is bound to 127.0.0.1; an explicit host is
// replaced too.  Unix socket paths and handles are left alone.  The servers
// keep advertising whatever URL they advertise (the conformance mocks say
// `http://localhost:PORT`), so `localhost` must resolve to 127.0.0.1.
"use strict";

const net = require("node:net");

const HOST = "127.0.0.1";

const isPort = (value) =>
  typeof value === "number" || (typeof value === "string" && /^\d+$/.test(value));

const originalListen = net.Server.prototype.listen;

net.Server.prototype.listen = function listen(...args) {
  const first = args[0];
  if (args.length === 0 || typeof first === "function") {
    args.unshift(0, HOST);
  } else if (isPort(first)) {
    if (typeof args[1] === "string") args[1] = HOST;
    else args.splice(1, 0, HOST);
  } else if (first && typeof first === "object" && !Array.isArray(first) && "port" in first) {
    args[0] = { ...first, host: HOST };
  }
  return originalListen.apply(this, args);
};
