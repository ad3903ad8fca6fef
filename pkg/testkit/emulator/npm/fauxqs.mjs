// fauxqs.mjs starts the pinned fauxqs SQS emulator on 127.0.0.1:$FAUXQS_PORT so that its queue
// URLs are usable as they are: fauxqs's own command line names queues
// http://sqs.<region>.<host>:<port>/..., a host that does not resolve, and listens on every
// interface. With an empty store host, a queue URL is built from the request's Host header,
// the loopback endpoint the client used: http://127.0.0.1:<port>/000000000000/<name>.
import { buildApp } from "./node_modules/fauxqs/dist/app.js";
import { SqsStore } from "./node_modules/fauxqs/dist/sqs/sqsStore.js";

const sqsStore = new SqsStore();
sqsStore.host = "";
const app = buildApp({ logger: process.env.FAUXQS_LOGGER !== "false", stores: { sqsStore } });
await app.listen({ port: Number(process.env.FAUXQS_PORT ?? 0), host: "127.0.0.1" });
