// Preload for the conformance CLI, after tests/node/loopback.cjs.
//
// loopback.cjs binds every listen(port) to 127.0.0.1 by adding a host. Given a host, Node
// resolves it with dns.lookup before binding, which defers the bind to a later tick even
// for an IP literal, so a mock server that reads `server.address().port` right after
// `listen(0)` (the elicitation scenarios do) gets null. Answering lookups of IP literals
// synchronously makes such a listen() bind at once again, as it did without a host.
"use strict";

const dns = require("node:dns");
const net = require("node:net");

const originalLookup = dns.lookup;

dns.lookup = function lookup(hostname, options, callback) {
  if (typeof options === "function") {
    callback = options;
    options = {};
  }
  const family = net.isIP(hostname);
  if (family && typeof callback === "function") {
    if (options && typeof options === "object" && options.all) {
      callback(null, [{ address: hostname, family }]);
    } else {
      callback(null, hostname, family);
    }
    return {};
  }
  return originalLookup.call(this, hostname, options, callback);
};
