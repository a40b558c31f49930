// Verifies one webhook call the way posthorn's users do: with `standardwebhooks`, the
// Standard Webhooks reference library (https://www.standardwebhooks.com), not with code of
// our own. Reads one JSON object on stdin:
//   {"secret": "whsec_…", "headers": {"webhook-id": …, "webhook-timestamp": …,
//    "webhook-signature": …}, "body": "<the raw body>"}
// ("body_base64" may replace "body" to pass the raw bytes exactly). The secret is given as
// posthorn shows it; the library drops the "whsec_" prefix itself and base64-decodes the rest.
// Valid: prints {"ok": true, "payload": <the parsed body>} and exits 0.
// Invalid: prints {"ok": false, "error": "<the library's message>"} and exits 1.
// usage: node verify_webhook.js < input.json
const { Webhook } = require("standardwebhooks");

function readStdin() {
  const chunks = [];
  return new Promise((resolve, reject) => {
    process.stdin.on("data", (c) => chunks.push(c));
    process.stdin.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    process.stdin.on("error", reject);
  });
}

function fail(error) {
  console.log(JSON.stringify({ ok: false, error: String(error && error.message ? error.message : error) }));
  process.exitCode = 1;
}

readStdin()
  .then((text) => {
    let input;
    try {
      input = JSON.parse(text);
    } catch (e) {
      return fail(`stdin is not JSON: ${e.message}`);
    }
    const body =
      typeof input.body_base64 === "string" ? Buffer.from(input.body_base64, "base64") : input.body;
    if (typeof input.secret !== "string" || typeof body === "undefined" || !input.headers) {
      return fail("stdin must hold secret, headers and body (or body_base64)");
    }
    try {
      const payload = new Webhook(input.secret).verify(body, input.headers);
      console.log(JSON.stringify({ ok: true, payload }));
    } catch (e) {
      fail(e);
    }
  })
  .catch(fail);
