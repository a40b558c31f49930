#!/usr/bin/env bash
# Benchmark (issue 30): $EMAILS emails sent as $((EMAILS / BATCH)) `POST /v1/emails/batch` of
# $BATCH each vs $EMAILS single `POST /v1/emails`, in the same run, on the same posthorn
# (SQLite), over keep-alive connections; reports the emails stored per second of each and
# their ratio (the goal: batch >= 3x).
#
# What one run does:
#   1. dnsmasq, posthorn on a fresh data dir, one account and key, mail.example.com
#      verified (start_posthorn_with_verified_domain, bench/lib.sh); delivery held by the
#      holding relay, so that acceptance alone is measured, as in bench/send_emails.sh;
#   2. the same 1 KB text email ($TEXT_BYTES of text) as a single send's body, and $BATCH
#      copies of it as a batch's;
#   3. a warm-up of each, then $ROUNDS rounds alternating which goes first:
#      $EMAILS single sends over $SINGLE_CONNECTIONS keep-alive connections, then
#      $EMAILS / $BATCH batches over $BATCH_CONNECTIONS, both made by h2load (--h1; wrk
#      cannot stop after a number of requests) through bench/batch_load.py (CLIENT=python:
#      its own threads, slower: near its limit a single send costs it as much CPU as
#      posthorn); the emails of the 200 answers per second of the run, and the emails
#      stored (rows counted with sqlite3 before and after each run);
#   4. stops posthorn (SIGTERM), checks that every 200 made its emails, prints a markdown
#      section and replaces the batch section of $RESULTS.
#
# Options (environment): ROUNDS=7 EMAILS=10000 BATCH=100 PROCS=4 SINGLE_CONNECTIONS=128
#   BATCH_CONNECTIONS=16 TEXT_BYTES=1024 CLIENT=h2load (or python) PH_BIN=build/posthorn RESULTS=bench/RESULTS.md
#   (empty: do not write it) NOTE="..." (a line added to the results, e.g. about noise)
#   PERF=1 (record a perf profile of posthorn during one extra batch run, PERF_KIND=single: a
#   single-send run: $tmp/perf-batch.txt,
#   kept with KEEP_TMP=1) KEEP_TMP=1.
# Exit status: 0 ok; 1 posthorn misbehaved; 2 bad usage or a missing tool.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

ROUNDS=${ROUNDS:-7}
EMAILS=${EMAILS:-10000}
BATCH=${BATCH:-100}
PROCS=${PROCS:-4}
# Both sides are measured at saturation, with enough requests in flight to keep every thread
# of posthorn busy: with 4 batch connections a third of posthorn's CPU samples were the
# search indexer's (nice 15: it runs only on what the others leave idle), each connection
# waiting for its batch's commit; 16 use the machine. Single sends level off at 128 (64: a
# few % fewer; 256: no more). 10,000 emails a run, as the issue has it: a batch run lasts
# about 0.25 s, so 7 rounds, and the median; EMAILS=50000 gives steadier rounds.
SINGLE_CONNECTIONS=${SINGLE_CONNECTIONS:-128}
BATCH_CONNECTIONS=${BATCH_CONNECTIONS:-16}
TEXT_BYTES=${TEXT_BYTES:-1024}
CLIENT=${CLIENT:-h2load}
PH_BIN=${PH_BIN:-build/posthorn}
RESULTS=${RESULTS-bench/RESULTS.md}
NOISY_PCT=${NOISY_PCT:-10}
SEND_RATE=100000000 # limits.send_rate_per_minute: nothing is throttled
DOMAIN=mail.example.com
FROM="Bench <bench@$DOMAIN>"
TO=user@example.net
DKIM_ZONE=dkim.posthorn.test
SPF_INCLUDE=spf.posthorn.test
INBOUND_MX=mx.posthorn.test

say() { printf '[batch] %s\n' "$*" >&2; }
for v in ROUNDS EMAILS BATCH PROCS SINGLE_CONNECTIONS BATCH_CONNECTIONS TEXT_BYTES; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')" 2
done
((BATCH <= 100)) || die "BATCH must be at most 100 (a batch's bound)" 2
((EMAILS % BATCH == 0)) || die "EMAILS must be a multiple of BATCH" 2
[[ $CLIENT == h2load || $CLIENT == python ]] || die "CLIENT must be h2load or python" 2

missing=()
tools=(sqlite3 curl timeout awk sort pgrep)
[[ $CLIENT == python ]] || tools+=(h2load)
for tool in "${tools[@]}"; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
DNSMASQ=$(command -v dnsmasq 2>/dev/null || echo /usr/sbin/dnsmasq)
[[ -x $DNSMASQ ]] || missing+=(dnsmasq)
PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3 2>/dev/null || echo)
[[ -n $PY ]] || missing+=(python3)
if [[ ${#missing[@]} -gt 0 ]]; then
  die "missing tools: ${missing[*]} — install them with scripts/install-deps.sh --bench" 2
fi
[[ -x $PH_BIN ]] || die "no posthorn binary at $PH_BIN — build it first (make build), or set PH_BIN" 2

while read -r name; do unset "$name"; done < <(compgen -e | grep '^POSTHORN_' || true)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/posthorn-bench.XXXXXX")
ph_pid=
ph_exit=
dns_pid=
hold_pid=
bg_pid=
nginx_pid=

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n $bg_pid ]]; then kill -TERM "$bg_pid" 2>/dev/null || true; fi
  stop_posthorn
  stop_dnsmasq
  stop_hold
  if [[ -n ${KEEP_TMP:-} ]]; then say "kept $tmp"; else rm -rf "$tmp"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM
used_ports=" "

# ---- set-up ------------------------------------------------------------------------

ph_commit=$(binary_commit)
cp "$PH_BIN" "$tmp/posthorn"
ph_sha=$(sha256sum "$tmp/posthorn" | cut -c1-12)
py_version=$("$PY" -c 'import platform; print(platform.python_version())')
client_version="Python $py_version"
[[ $CLIENT == python ]] || client_version="$(h2load --version | head -1) through Python $py_version"
problems=()
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
start_posthorn_with_verified_domain

write_send_body "$tmp/single.json" "$TEXT_BYTES" "Batch bench"
"$PY" - "$tmp/single.json" "$BATCH" >"$tmp/batch.json" <<'PY'
import sys
one = open(sys.argv[1]).read()
sys.stdout.write("[" + ",".join([one] * int(sys.argv[2])) + "]")
PY

rows() { sqlite3 "$db" '.timeout 10000' 'SELECT COUNT(*) FROM emails'; }

# run KIND LABEL: one run of bench/batch_load.py, KIND single ($EMAILS sends) or batch
# ($EMAILS / $BATCH batches); sets R to "emails_per_s stored p50_ms p99_ms cpu_ms_per_email
# client_cpu_ms_per_email steal other".
R=
run() {
  local kind=$1 label=$2 out="$tmp/load-$2.json" r0 r1 c0 c1 m0 m1 stored cpu noise
  local args=(--path /v1/emails --body "$tmp/single.json" --requests "$EMAILS"
    --connections "$SINGLE_CONNECTIONS" --procs "$PROCS" --client "$CLIENT")
  if [[ $kind == batch ]]; then
    args=(--path /v1/emails/batch --body "$tmp/batch.json" --requests $((EMAILS / BATCH))
      --connections "$BATCH_CONNECTIONS" --procs "$PROCS" --client "$CLIENT")
  fi
  r0=$(rows)
  m0=$(machine_ticks)
  c0=$(cpu_ticks "$ph_pid")
  if ! bounded 600 "$out" "$tmp/load-$label.err" "$PY" bench/batch_load.py --port "$ph_port" \
    --key "$key" "${args[@]}"; then
    cat "$out" "$tmp/load-$label.err" >&2
    die "the load client failed ($label)"
  fi
  c1=$(cpu_ticks "$ph_pid")
  m1=$(machine_ticks)
  kill -0 "$ph_pid" 2>/dev/null || die "posthorn died during $label"
  r1=$(rows)
  stored=$((r1 - r0))
  ((stored == EMAILS)) || problems+=("$label: $stored emails stored, $EMAILS expected")
  cpu=$(calc "($c1 - $c0) * 1000 / $(getconf CLK_TCK) / $EMAILS")
  noise=$(noise_between "$m0" "$m1" "$((c1 - c0))")
  R="$(fmt '%.0f' "$(jfield "$out" emails_per_s)") $stored $(jfield "$out" p50_ms) $(jfield "$out" p99_ms) $(fmt '%.4f' "$cpu") $(fmt '%.4f' "$(calc "$(jfield "$out" client_cpu_s) * 1000 / $EMAILS")") $noise"
  say "$label: $(cat "$out") stored $stored, posthorn CPU $(fmt '%.4f' "$cpu") ms/email, noise $noise"
}

# ---- runs --------------------------------------------------------------------------

say "warm-up"
run single warm-single
run batch warm-batch
singles=()
batches=()
rows_table=()
for ((round = 1; round <= ROUNDS; round++)); do
  if ((round % 2)); then order=(single batch); else order=(batch single); fi
  declare -A got=()
  for kind in "${order[@]}"; do
    run "$kind" "$kind-$round"
    got[$kind]=$R
  done
  read -r s_rate s_stored s_p50 s_p99 s_cpu s_ccpu s_steal s_other <<<"${got[single]}"
  read -r b_rate b_stored b_p50 b_p99 b_cpu b_ccpu b_steal b_other <<<"${got[batch]}"
  singles+=("$s_rate")
  batches+=("$b_rate")
  ratio=$(fmt '%.2f' "$(calc "$b_rate / $s_rate")")
  rows_table+=("| $round | ${order[0]} | $s_rate | $s_stored | $s_p50 | $s_p99 | $s_cpu | $s_ccpu | $s_steal% / $s_other% | $b_rate | $b_stored | $b_p50 | $b_p99 | $b_cpu | $b_ccpu | $b_steal% / $b_other% | $ratio |")
  unset got
done
s_med=$(median "${singles[@]}")
b_med=$(median "${batches[@]}")
ratio_med=$(fmt '%.2f' "$(calc "$b_med / $s_med")")
say "median: single $s_med emails/s, batch $b_med emails/s, ratio ${ratio_med}x"

if [[ -n ${PERF:-} ]] && command -v perf >/dev/null 2>&1; then
  say "profiling one batch run (perf record -g)"
  perf record -F 999 -g -o "$tmp/perf.data" -p "$ph_pid" >/dev/null 2>&1 &
  perf_rec=$!
  sleep 0.3
  run "${PERF_KIND:-batch}" perf-batch
  kill -INT "$perf_rec" 2>/dev/null || true
  wait "$perf_rec" 2>/dev/null || true
  perf report -i "$tmp/perf.data" --no-children --sort dso,symbol --stdio 2>/dev/null |
    grep -v '^#' | grep -v '^$' | head -60 >"$tmp/perf-batch.txt" || true
  say "profile: $tmp/perf-batch.txt"
fi

# ---- check and write ---------------------------------------------------------------

final_rows=$(rows)
stop_posthorn
[[ $ph_exit == 0 ]] || problems+=("posthorn exited $ph_exit on SIGTERM")
expected=$((EMAILS * 2 * (ROUNDS + 1)))
[[ -n ${PERF:-} ]] && expected=$((expected + EMAILS))
((final_rows >= expected)) || problems+=("$final_rows emails stored, $expected expected")

section="$tmp/section.md"
{
  echo "## Batch (issue 30): \`POST /v1/emails/batch\` ($BATCH a request) vs single \`POST /v1/emails\`"
  echo
  echo "Generated by \`bench/batch.sh\` on $(date -u '+%Y-%m-%d %H:%M') UTC."
  echo
  echo "- Machine: $(nproc) CPUs, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); kernel $(uname -r); load average $load_at_start at the start."
  [[ -z ${NOTE:-} ]] || echo "- **Note: $NOTE**"
  echo "- Software: posthorn $ph_commit (\`$PH_BIN\`, sha256 $ph_sha…), $client_version (the client), dnsmasq $dns_version."
  echo "- posthorn: fresh data dir (SQLite, WAL, synchronous=FULL), one account and key, mail.example.com verified"
  echo "  against dnsmasq, send rate unlimited, delivery held (acceptance alone, as in the send_emails section)."
  echo "- Each email: \`{\"from\",\"to\",\"subject\",\"text\"}\` with $TEXT_BYTES bytes of text ($(wc -c <"$tmp/single.json")-byte body);"
  echo "  a batch is $BATCH of them ($(wc -c <"$tmp/batch.json") bytes)."
  echo "- Each round: $EMAILS emails as $EMAILS single sends over $SINGLE_CONNECTIONS keep-alive connections and as"
  if [[ $CLIENT == python ]]; then
    echo "  $((EMAILS / BATCH)) batches over $BATCH_CONNECTIONS, the order alternating (\`bench/batch_load.py\`: a thread per connection, each"
    echo "  sending its share one request after another, in $PROCS processes; wrk cannot stop after a number of requests)."
  else
    echo "  $((EMAILS / BATCH)) batches over $BATCH_CONNECTIONS, the order alternating (h2load --h1 -n, $PROCS threads at most, through"
    echo "  \`bench/batch_load.py --client h2load\`; wrk cannot stop after a number of requests). p50 and p99 are h2load's mean per request."
  fi
  echo "  emails/s = the emails of the 200 answers per second from the first request to the last answer; stored = rows of"
  echo "  \`emails\` after − before. CPU = posthorn's CPU time per email (ms); client CPU = the load client's, per email;"
  echo "  noise = CPU steal / other processes than posthorn, % of the machine (the client counts as other)."
  echo
  echo "| round | first | single emails/s | stored | p50 ms | p99 ms | CPU | client CPU | noise | batch emails/s | stored | p50 ms | p99 ms | CPU | client CPU | noise | batch/single |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  printf '%s\n' "${rows_table[@]}"
  echo "| **median** | | **$s_med** | | | | | | | **$b_med** | | | | | | | **${ratio_med}×** |"
  echo
  if ((${#problems[@]})); then
    echo "Problems:"
    printf -- '- %s\n' "${problems[@]}"
    echo
  fi
  echo "Reproduce: \`ROUNDS=$ROUNDS CLIENT=$CLIENT bench/batch.sh\`."
} >"$section"
cat "$section"
[[ -z $RESULTS ]] || write_results_section batch "$section"
((${#problems[@]} == 0)) || exit 1
