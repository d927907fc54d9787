// conformance.js: the JavaScript client's transcript runner (docs/protocol.md section 10).
//
// Usage: coopsim conformance NAMESERVER --client "node clients/js/conformance.js"
// Reads one request per line on stdin and writes the reply on stdout, through Client.request,
// so the conformance transcripts test this client's own request path:
//   request:  CONN \t PORT \t COMMAND \t TEXT_HEX \t P1,P2,... \t D1,D2,...
//   reply:    ERROR \t COMMAND \t TEXT_HEX \t P1,... \t D1,...
// Each CONN (1 or 2) is a Client of its own; /nameserver is the name server itself. An error
// reply reaches the runner as the RemoteError Client.request rejects with.
import { createInterface } from "node:readline";
import { Client, RemoteError } from "./coopsim.js";

const clients = new Map();

function clientFor(conn) {
  if (!clients.has(conn)) clients.set(conn, new Client({ timeout: 10000 }));
  return clients.get(conn);
}

async function answer(line) {
  const [conn, port, command, textHex, params, data] = line.split("\t");
  const client = clientFor(conn);
  const text = Buffer.from(textHex, "hex").toString("utf8");
  const numbers = (s, parse) => (s ? s.split(",").map(parse) : []);
  let reply;
  try {
    const endpoint = port === "/nameserver" ? client.nameserver : await client.lookup(port);
    reply = await client.request(endpoint, Number(command), text, numbers(params, Number),
                                 numbers(data, Number));
  } catch (err) {
    if (!(err instanceof RemoteError)) throw err;
    reply = { error: err.code, text: err.text, command: err.command, params: [], data: [] };
  }
  return [reply.error, reply.command, Buffer.from(reply.text, "utf8").toString("hex"),
          reply.params.join(","), reply.data.map(String).join(",")].join("\t");
}

for await (const line of createInterface({ input: process.stdin })) {
  process.stdout.write(`${await answer(line)}\n`);
}
for (const client of clients.values()) client.close();
