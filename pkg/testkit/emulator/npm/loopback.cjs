// loopback.cjs makes every server of a Node process listen on 127.0.0.1 only. fauxqs binds
// 0.0.0.0 whatever it is told (FAUXQS_HOST sets the host of its queue URLs, not its listener),
// and kinesalite's command line has no host: the emulator package preloads this file for both
// (node --require loopback.cjs).
"use strict";
const net = require("node:net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const [first] = args;
  if (first !== null && typeof first === "object" && !Array.isArray(first) && !("_handle" in first) && !("fd" in first)) {
    args[0] = { ...first, host: "127.0.0.1" }; // listen(options[, cb])
  } else if (typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first))) {
    if (typeof args[1] === "string") {
      args[1] = "127.0.0.1"; // listen(port, host, ...)
    } else {
      args.splice(1, 0, "127.0.0.1"); // listen(port[, backlog][, cb])
    }
  }
  return listen.apply(this, args);
};
