#!/usr/bin/env bash
# `make run`: on a new data dir, create the dev account, a live API key and a test-mode key
# (docs/test-mode.md), and print curl lines: one that uses the live key, and two that send an
# email with the test key (from the sandbox sender, no domain needed) and read it back as
# DELIVERED; then run the server in the foreground with config/posthorn.dev.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/posthorn
config=${POSTHORN_CONFIG:-config/posthorn.dev.toml}
data_dir=$(sed -n 's/^data_dir *= *"\(.*\)"/\1/p' "$config" | head -n1)
data_dir=${POSTHORN_SERVER_DATA_DIR:-${data_dir:-./data}}
listen=$(sed -n 's/^listen *= *"\(.*\)"/\1/p' "$config" | head -n1)
listen=${POSTHORN_HTTP_LISTEN:-${listen:-127.0.0.1:8080}}
submission=$(sed -n 's/^submission_listen *= *"\(.*\)"/\1/p' "$config" | head -n1)
submission=${POSTHORN_SMTP_SUBMISSION_LISTEN:-${submission:-127.0.0.1:587}}
tls_cert=$(sed -n 's/^tls_cert *= *"\(.*\)"/\1/p' "$config" | head -n1)
tls_cert=${POSTHORN_SMTP_TLS_CERT:-$tls_cert}
# The certificate SMTP clients are to trust: the configured one, or the self-signed pair
# that serve makes in the data dir (docs/smtp.md#trusting-the-self-signed-certificate).
if [[ -n "$tls_cert" ]]; then
  cert_note="SMTP submission on $submission (STARTTLS) presents $tls_cert."
else
  cert_note="SMTP submission on $submission (STARTTLS) presents the self-signed certificate
  $(realpath -m "$data_dir/tls.crt")
  (made by the server at its first start): give clients that file as their CA
  (docs/smtp.md#trusting-the-self-signed-certificate)."
fi

if [[ ! -f "$data_dir/posthorn.db" ]]; then
  "$bin" --config "$config" account create dev >/dev/null
  key=$("$bin" --config "$config" key create --account dev | tail -n1)
  test_key=$("$bin" --config "$config" key create --account dev --test | tail -n1)
  cat <<MSG

  posthorn: a new data dir at $data_dir, with the account "dev" and this API key
  (shown once; only its hash is stored):

    $key

  and a test-mode key, whose mail is accepted and recorded but never delivered
  (docs/test-mode.md):

    $test_key

  Try them, once the server below says it is serving:

    curl -s -H "Authorization: Bearer $key" "http://$listen/v1/logs"

  Send a first email with the test key, from the sandbox sender (no domain to verify yet):

    id=\$(curl -s -H "Authorization: Bearer $test_key" -H "Content-Type: application/json" -d '{"from":"sandbox@test.posthorn","to":"delivered@test.posthorn","subject":"Hello","text":"My first email"}' "http://$listen/v1/emails" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p'); echo "\$id"

  and read it back (status DELIVERED, "test": true):

    curl -s -H "Authorization: Bearer $test_key" "http://$listen/v1/emails/\$id"

  $cert_note

MSG
else
  cat <<MSG

  posthorn: using the existing data dir $data_dir. Keys are stored only as hashes;
  make a new one with:  $bin --config $config key create --account dev
  (add --test for a test-mode key: docs/test-mode.md)

  $cert_note

MSG
fi
exec "$bin" --config "$config" serve
