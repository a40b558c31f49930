// Checks docs/openapi.yaml with @apidevtools/swagger-parser (the document must validate as
// OpenAPI 3.1), then checks real answers of the server against it: each answer's JSON body
// against the schema its operation documents for its status (JSON Schema 2020-12, with
// Ajv). Reads {"spec": path, "answers": [{method, path, status, body}]} on stdin; prints
// one JSON line {ok, errors: [...], operations: ["GET /v1/…", …]} and exits 0 when ok.
"use strict";

const SwaggerParser = require("@apidevtools/swagger-parser");
const Ajv2020 = require("ajv/dist/2020");
const addFormats = require("ajv-formats");

function readStdin() {
  return new Promise((resolve) => {
    const chunks = [];
    process.stdin.on("data", (c) => chunks.push(c));
    process.stdin.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

// The path template of `paths` that `path` (no query) is: a literal segment outranks a
// placeholder, so /v1/emails/envelope is not /v1/emails/{id}.
function templateOf(paths, path) {
  const segs = path.split("/");
  let best = null;
  let bestScore = -1;
  for (const tpl of Object.keys(paths)) {
    const t = tpl.split("/");
    if (t.length !== segs.length) continue;
    let score = 0;
    let match = true;
    for (let i = 0; i < t.length; i++) {
      if (/^\{[^}]+\}$/.test(t[i])) continue;
      if (t[i] !== segs[i]) {
        match = false;
        break;
      }
      score++;
    }
    if (match && score > bestScore) {
      best = tpl;
      bestScore = score;
    }
  }
  return best;
}

function responseFor(op, status) {
  const r = op.responses || {};
  return r[String(status)] || r[`${String(status)[0]}XX`] || r.default || null;
}

async function main() {
  const input = JSON.parse(await readStdin());
  const errors = [];
  try {
    await SwaggerParser.validate(input.spec);
  } catch (err) {
    console.log(JSON.stringify({ ok: false, errors: [`the document: ${err.message}`] }));
    process.exit(1);
  }
  const api = await SwaggerParser.dereference(input.spec);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const operations = [];
  for (const p of Object.keys(api.paths))
    for (const m of Object.keys(api.paths[p]))
      if (["get", "post", "put", "patch", "delete"].includes(m))
        operations.push(`${m.toUpperCase()} ${p}`);
  for (const a of input.answers || []) {
    const what = `${a.method} ${a.path} → ${a.status}`;
    const tpl = templateOf(api.paths, a.path.split("?")[0]);
    if (!tpl) {
      errors.push(`${what}: no path of the document`);
      continue;
    }
    const op = api.paths[tpl][a.method.toLowerCase()];
    // A method the path does not have is answered 405 with the error body, which the
    // document describes once (components.schemas.Error), not under every path.
    if (!op && a.status !== 405) {
      errors.push(`${what}: ${tpl} documents no ${a.method}`);
      continue;
    }
    const res = op ? responseFor(op, a.status)
                   : { content: { "application/json": { schema: api.components.schemas.Error } } };
    if (!res) {
      errors.push(`${what}: ${a.method} ${tpl} documents no ${a.status} answer`);
      continue;
    }
    const schema = res.content && res.content["application/json"] &&
      res.content["application/json"].schema;
    if (!schema) {
      if (a.body !== null && a.body !== undefined)
        errors.push(`${what}: a JSON body, and the document gives it no schema`);
      continue;
    }
    const validate = ajv.compile(schema);
    if (!validate(a.body))
      errors.push(`${what}: ${ajv.errorsText(validate.errors)}; body ${JSON.stringify(a.body).slice(0, 300)}`);
  }
  console.log(JSON.stringify({ ok: errors.length === 0, errors, operations }));
  process.exit(errors.length === 0 ? 0 : 1);
}

main().catch((err) => {
  console.log(JSON.stringify({ ok: false, errors: [String(err && err.stack || err)] }));
  process.exit(2);
});
