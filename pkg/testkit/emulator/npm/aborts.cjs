// aborts.cjs keeps kinesalite serving when a client goes away in the middle of a request:
// kinesalite's request 'error' handler rethrows the ECONNRESET "aborted" error Node raises
// then, and the uncaught error ends the process, for every client after it. The emulator
// package preloads this file for kinesalite (node --require aborts.cjs): that one error is
// logged and dropped; any other uncaught error still ends the process, as it would have.
"use strict";

process.on("uncaughtException", (err) => {
  if (err && err.code === "ECONNRESET" && err.message === "aborted") {
    console.error(`a client aborted its request; serving on (${err.message})`);
    return;
  }
  console.error(err);
  process.exit(1);
});
