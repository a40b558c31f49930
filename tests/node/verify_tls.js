// Connects to posthorn's submission port with nodemailer, STARTTLS required, trusting only
// the CA file given (no rejectUnauthorized: false): nodemailer's own certificate and host
// name checks. Prints {"ok": true} or the error as JSON.
// usage: node verify_tls.js HOST PORT CA_FILE   (CA_FILE "-": the system's CAs only)
const fs = require("fs");
const nodemailer = require("nodemailer");

const [host, port, caFile] = process.argv.slice(2);
const tls = caFile === "-" ? {} : { ca: fs.readFileSync(caFile) };
const transport = nodemailer.createTransport({
  host,
  port: Number(port),
  secure: false,
  requireTLS: true,
  tls,
});
transport
  .verify()
  .then(() => console.log(JSON.stringify({ ok: true })))
  .catch((err) => {
    console.log(JSON.stringify({ ok: false, code: err.code || null, error: String(err) }));
    process.exitCode = 1;
  });
