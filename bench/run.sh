#!/usr/bin/env bash
# posthorn benchmarks — the entry point of `make bench` (after `scripts/install-deps.sh
# --bench` has installed wrk, nginx-light and postfix).
#
# Each benchmark is a script next to this one that starts its own peer (for metrics, a
# posthorn with metrics off) and its own posthorn on loopback, measures both in the same
# run (these machines are noisy: only ratios measured side by side mean anything), stops
# everything it started and updates its own section of bench/RESULTS.md.
#
#   bench/run.sh                 every benchmark
#   bench/run.sh send_emails     only the named ones (http_logs, send_emails, delivery,
#                                smtp_accept, scale, pg, metrics, stats)
#   ROUNDS=5 bench/run.sh        options are passed through the environment (see each script)
set -euo pipefail
cd "$(dirname "$0")/.."

all=(http_logs send_emails delivery smtp_accept scale pg metrics stats)
selected=("$@")
[[ ${#selected[@]} -gt 0 ]] || selected=("${all[@]}")

child=
on_signal() {
  trap - INT TERM
  if [[ -n "$child" ]] && kill -0 "$child" 2>/dev/null; then
    kill -TERM "$child" 2>/dev/null || true
    wait "$child" 2>/dev/null || true
  fi
  exit 130
}
trap on_signal INT TERM

failed=()
for name in "${selected[@]}"; do
  script="bench/$name.sh"
  if [[ ! -x "$script" ]]; then
    echo "bench: no benchmark named '$name' ($script is missing or not executable)" >&2
    exit 2
  fi
  echo "==> bench/$name.sh"
  # In the background so that a TERM sent to this script reaches the benchmark, whose own
  # trap stops the servers it started.
  "$script" &
  child=$!
  if wait "$child"; then
    :
  else
    rc=$?
    echo "bench: $name failed (exit $rc)" >&2
    failed+=("$name")
  fi
  child=
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "bench: failed: ${failed[*]}" >&2
  exit 1
fi
echo "bench: done; results in bench/RESULTS.md"
