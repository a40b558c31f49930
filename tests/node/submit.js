// Sends one message through posthorn's submission port with nodemailer (STARTTLS, AUTH
// PLAIN with the API key as user and password). Prints the server's answer as JSON.
// usage: node submit.js PORT KEY FROM TO SUBJECT [CONTENT]
// CONTENT, optional, is JSON: {"text", "html", "headers"} (each optional), in place of the
// default text and X-Track-Opens header.
const nodemailer = require("nodemailer");

const [port, key, from, to, subject, content] = process.argv.slice(2);
const body = content
  ? JSON.parse(content)
  : { text: "sent by nodemailer", headers: { "X-Track-Opens": "true" } };
const transport = nodemailer.createTransport({
  host: "127.0.0.1",
  port: Number(port),
  secure: false,
  requireTLS: true,
  tls: { rejectUnauthorized: false }, // the data dir's self-signed certificate
  auth: { user: key, pass: key },
});
transport
  .sendMail({ from, to, subject, ...body })
  .then((info) => {
    console.log(JSON.stringify({ ok: true, response: info.response, messageId: info.messageId }));
  })
  .catch((err) => {
    console.log(JSON.stringify({ ok: false, code: err.responseCode || null, error: String(err) }));
    process.exitCode = 1;
  });
