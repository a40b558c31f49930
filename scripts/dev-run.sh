#!/usr/bin/env bash
# `make run`: on a new data dir, create the dev account and an API key and print a curl
# line; then run the server in the foreground with config/posthorn.dev.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=build/posthorn
config=${POSTHORN_CONFIG:-config/posthorn.dev.toml}
data_dir=$(sed -n 's/^data_dir *= *"\(.*\)"/\1/p' "$config" | head -n1)
data_dir=${POSTHORN_SERVER_DATA_DIR:-${data_dir:-./data}}
listen=$(sed -n 's/^listen *= *"\(.*\)"/\1/p' "$config" | head -n1)
listen=${POSTHORN_HTTP_LISTEN:-${listen:-127.0.0.1:8080}}

if [[ ! -f "$data_dir/posthorn.db" ]]; then
  "$bin" --config "$config" account create dev >/dev/null
  key=$("$bin" --config "$config" key create --account dev | tail -n1)
  cat <<MSG

  posthorn: a new data dir at $data_dir, with the account "dev" and this API key
  (shown once; only its hash is stored):

    $key

  Try it, once the server below says it is serving:

    curl -s -H "Authorization: Bearer $key" "http://$listen/v1/logs"

MSG
else
  cat <<MSG

  posthorn: using the existing data dir $data_dir. Keys are stored only as hashes;
  make a new one with:  $bin --config $config key create --account dev

MSG
fi
exec "$bin" --config "$config" serve
