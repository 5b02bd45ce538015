// Preload for server-everything over HTTP, used after loopback.cjs:
//
//   node --require tests/node/loopback.cjs --require tests/node/announce.cjs \
//        .../server-everything/dist/index.js streamableHttp|sse --port N
//
// * `--port N` on the command line sets process.env.PORT = N before the server
//   reads it (server-everything reads PORT, default 3001; 0 = a free port).
// * Once the server listens, one line is written to stdout:
//     LISTENING http://127.0.0.1:<port><path>
//   with <path> /mcp for `streamableHttp` and /sse for `sse`.  (The server's
//   own "listening on port N" message goes to stderr and shows PORT as given,
//   i.e. 0, so it cannot be used to find the port.)
"use strict";

const net = require("node:net");

const argv = process.argv.slice(2);
const portIndex = argv.indexOf("--port");
if (portIndex !== -1 && argv[portIndex + 1] !== undefined) {
  process.env.PORT = argv[portIndex + 1];
}
const path = argv.includes("sse") ? "/sse" : argv.includes("streamableHttp") ? "/mcp" : "";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function announcingListen(...args) {
  this.once("listening", () => {
    const address = this.address();
    if (address && typeof address === "object") {
      process.stdout.write(`LISTENING http://127.0.0.1:${address.port}${path}\n`);
    }
  });
  return listen.apply(this, args);
};
