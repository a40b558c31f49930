#!/usr/bin/env bash
# Benchmark: authenticated `GET /v1/logs?limit=1` on posthorn, next to nginx answering a
# static 204, both driven by wrk on loopback in the same run.
#
# What one run does:
#   1. starts nginx with a private configuration in a temporary prefix (never the system
#      one) and posthorn on a fresh temporary data dir with one account and one API key,
#      each on a free port of 127.0.0.1;
#   2. warms both up, then runs `wrk --latency -t$THREADS -c$CONNECTIONS -d${DURATION}s`
#      against each, alternating (nginx first in odd rounds, posthorn first in even ones),
#      for $ROUNDS rounds;
#   3. runs posthorn once more at about $PACED_FRACTION of the maximum rate of its last
#      round (not the median: the rate falls as the request log grows); wrk has no -R
#      here, so a LuaJIT script paces requests with wrk's delay() hook; if that is not
#      possible, a light-load run with -c$LIGHT_CONNECTIONS instead;
#   4. stops posthorn (SIGTERM flushes the request log) and counts the request-log rows
#      against the requests wrk reported;
#   5. prints a markdown section and replaces the http_logs section of $RESULTS.
# Every authenticated request is written to the request log (SQLite, group commit), so
# the table grows during the run: that is part of what is measured.
#
# Options (environment): ROUNDS=3 DURATION=10 WARMUP=3 THREADS=2 CONNECTIONS=64
#   LIGHT_CONNECTIONS=8 PACED_FRACTION=0.5 PH_BIN=build/posthorn
#   NOISY_PCT=10 (flag runs where steal or other processes took more of the machine)
#   RESULTS=bench/RESULTS.md (empty: do not write it) KEEP_TMP=1 (keep the temp dir).
# Inherited POSTHORN_* variables are ignored so that a run does not depend on them.
# Exit status: 0 ok; 1 posthorn misbehaved (the results are written all the same, with
# the problems listed); 2 bad usage or a missing tool.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-64}
LIGHT_CONNECTIONS=${LIGHT_CONNECTIONS:-8}
PACED_FRACTION=${PACED_FRACTION:-0.5}
PH_BIN=${PH_BIN:-build/posthorn}
RESULTS=${RESULTS-bench/RESULTS.md}

say() { printf '[http_logs] %s\n' "$*" >&2; }
for v in ROUNDS DURATION WARMUP THREADS CONNECTIONS LIGHT_CONNECTIONS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')" 2
done
[[ $PACED_FRACTION =~ ^0?\.[0-9]+$ ]] || die "PACED_FRACTION must be in (0,1) (got '$PACED_FRACTION')" 2

missing=()
for tool in wrk nginx sqlite3 curl timeout awk sort pgrep; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  die "missing tools: ${missing[*]} — install them with scripts/install-deps.sh --bench (wrk, nginx-light; sqlite3, curl from the base set)" 2
fi
[[ -x $PH_BIN ]] || die "no posthorn binary at $PH_BIN — build it first (make build), or set PH_BIN" 2

while read -r name; do unset "$name"; done < <(compgen -e | grep '^POSTHORN_' || true)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/posthorn-bench.XXXXXX")
nginx_pid=
ph_pid=
ph_exit=
bg_pid=

# ---- process control ---------------------------------------------------------------

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n $bg_pid ]]; then kill -TERM "$bg_pid" 2>/dev/null || true; fi
  stop_posthorn
  stop_nginx
  if [[ -n ${KEEP_TMP:-} ]]; then
    say "kept $tmp"
  else
    rm -rf "$tmp"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

# The ports that free_port (bench/lib.sh) has handed out.
used_ports=" "

# ---- measurements ------------------------------------------------------------------

# run_wrk TARGET LABEL SECONDS WRK_ARGS...: one wrk run against nginx or posthorn; sets W to
# "req_per_s p50 p99 requests non_2xx socket_errors cpu_ms_per_request steal_pct other_pct"
# where other_pct is the CPU time used by processes other than the server and wrk (a
# build, say), in % of the machine.
# Returns 1 (after printing wrk's output) when wrk fails or its output cannot be read;
# exits at once when posthorn died during the run.
W=
run_wrk() {
  local target=$1 label=$2 secs=$3 out pids m0 m1 c0 c1 w0 w1 parsed reqs tck cpu noise
  shift 3
  W=
  out="$tmp/wrk-$label.txt"
  if [[ $target == nginx ]]; then
    # shellcheck disable=SC2207 # pids are words without spaces
    pids=("$nginx_pid" $(pgrep -P "$nginx_pid" || true))
  else
    pids=("$ph_pid")
  fi
  m0=$(machine_ticks)
  c0=$(cpu_ticks "${pids[@]}")
  w0=$(child_ticks)
  if ! bounded $((secs + 30)) "$out" "$out" wrk --latency -d"${secs}s" "$@"; then
    cat "$out" >&2
    say "wrk failed ($label)"
    return 1
  fi
  c1=$(cpu_ticks "${pids[@]}")
  w1=$(child_ticks)
  m1=$(machine_ticks)
  if [[ $target == posthorn ]] && ! kill -0 "$ph_pid" 2>/dev/null; then
    cat "$out" >&2
    say "posthorn died during the run '$label'; its log ends with:"
    tail -n 30 "$tmp/posthorn.log" >&2 || true
    exit 1
  fi
  if ! parsed=$(parse_wrk "$out"); then
    cat "$out" >&2
    say "cannot parse the wrk output ($label)"
    return 1
  fi
  read -r _ _ _ reqs _ _ <<<"$parsed"
  ((reqs > 0)) || reqs=1
  tck=$(getconf CLK_TCK)
  cpu=$(calc "($c1 - $c0) * 1000 / $tck / $reqs")
  noise=$(awk -v a="$m0" -v b="$m1" -v own=$((c1 - c0 + w1 - w0)) 'BEGIN {
    split(a, x, " "); split(b, y, " "); d = y[1] - x[1]
    if (d <= 0) { print "0.0 0.0"; exit }
    other = y[3] - x[3] - own
    printf "%.1f %.1f", 100 * (y[2] - x[2]) / d, (other > 0 ? 100 * other / d : 0) }')
  W="$parsed $cpu $noise"
}

log_rows() { sqlite3 "$db" '.timeout 10000' 'SELECT COUNT(*) FROM request_logs;'; }

# ---- start the servers -------------------------------------------------------------

nproc_n=$(nproc)
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
[[ -n $cpu_model ]] || cpu_model=unknown
# shellcheck disable=SC1091
os_name=$( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || echo unknown)
wrk_version=$( (wrk -v 2>&1 || true) | awk 'NR == 1 { print $2 }')
nginx_version=$(nginx -v 2>&1 | sed 's/^nginx version: //; s/^nginx\///')
ph_commit=$(binary_commit)
# A copy, so that a rebuild during the run cannot change the binary under the benchmark.
cp "$PH_BIN" "$tmp/posthorn"
ph_sha=$(sha256sum "$tmp/posthorn" | cut -c1-12)
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)

head -c 1024 /dev/zero | tr '\0' 'x' >"$tmp/body-1k"
start_nginx_post "$tmp/body-1k"
nginx_url="http://127.0.0.1:$nginx_port/204"
wait_http "$nginx_pid" 10 204 "$nginx_url" || die "nginx did not answer 204 on $nginx_url within 10 s"

free_port
ph_port=$REPLY
free_port
ph_smtp_sub=$REPLY
free_port
ph_smtp_in=$REPLY
ph_env=(
  "POSTHORN_SERVER_DATA_DIR=$tmp/data"
  "POSTHORN_HTTP_LISTEN=127.0.0.1:$ph_port"
  "POSTHORN_SMTP_SUBMISSION_LISTEN=127.0.0.1:$ph_smtp_sub"
  "POSTHORN_SMTP_INBOUND_LISTEN=127.0.0.1:$ph_smtp_in"
)
mkdir -p "$tmp/data"
db="$tmp/data/posthorn.db"
bounded 60 "$tmp/account.txt" "$tmp/account.txt" env "${ph_env[@]}" "$tmp/posthorn" account create bench || {
  cat "$tmp/account.txt" >&2
  die "posthorn account create failed"
}
bounded 60 "$tmp/key.txt" "$tmp/key.err" env "${ph_env[@]}" "$tmp/posthorn" key create --account bench || {
  cat "$tmp/key.txt" "$tmp/key.err" >&2
  die "posthorn key create failed"
}
key=$(tail -n1 "$tmp/key.txt")
[[ -n $key ]] || die "posthorn key create printed no key"
auth="Authorization: Bearer $key"
ph_path='/v1/logs?limit=1'
ph_url="http://127.0.0.1:$ph_port$ph_path"

env "${ph_env[@]}" "$tmp/posthorn" serve >"$tmp/posthorn.log" 2>&1 &
ph_pid=$!
if ! wait_http "$ph_pid" 20 200 -H "$auth" "$ph_url"; then
  tail -n 30 "$tmp/posthorn.log" >&2 || true
  die "posthorn did not answer 200 on $ph_url within 20 s"
fi
[[ -f $db ]] || die "no database at $db (has the default data dir layout changed?)"
# Authenticated requests made outside wrk (each is logged too): the readiness probe
# answered 200 exactly once.
extra_requests=1
say "posthorn $ph_commit: pid $ph_pid on 127.0.0.1:$ph_port, data dir $tmp/data"

# ---- measure -----------------------------------------------------------------------

wrk_nginx=(-t"$THREADS" -c"$CONNECTIONS" "$nginx_url")
wrk_ph=(-t"$THREADS" -c"$CONNECTIONS" -H "$auth" "$ph_url")

# Runs during which steal or other processes took more than NOISY_PCT % of the machine.
NOISY_PCT=${NOISY_PCT:-10}
noisy=()
# Every posthorn run: its requests, connections, non-2xx and socket errors.
ph_requests=0
ph_connections=0
ph_non2xx=0
ph_sockerr=0
nginx_non2xx=0
nginx_sockerr=0
say "warm-up: ${WARMUP}s each"
run_wrk nginx warmup-nginx "$WARMUP" "${wrk_nginx[@]}" || die "the nginx warm-up failed"
read -r _ _ _ _ n2 se _ _ _ <<<"$W"
nginx_non2xx=$((nginx_non2xx + n2))
nginx_sockerr=$((nginx_sockerr + se))
run_wrk posthorn warmup-posthorn "$WARMUP" "${wrk_ph[@]}" || die "the posthorn warm-up failed"
read -r _ _ _ rq n2 se _ _ _ <<<"$W"
account_posthorn "$rq" "$n2" "$se" "$CONNECTIONS"

declare -a n_rps n_p50 n_p99 n_cpu n_st p_rps p_p50 p_p99 p_cpu p_st p_rows
for ((r = 1; r <= ROUNDS; r++)); do
  order=(nginx posthorn)
  ((r % 2 == 1)) || order=(posthorn nginx)
  for target in "${order[@]}"; do
    say "round $r/$ROUNDS: $target (${DURATION}s)"
    if [[ $target == nginx ]]; then
      run_wrk nginx "r$r-nginx" "$DURATION" "${wrk_nginx[@]}" || die "round $r: the nginx run failed"
      read -r rps p50 p99 _ n2 se cpu st ot <<<"$W"
      nginx_non2xx=$((nginx_non2xx + n2))
      nginx_sockerr=$((nginx_sockerr + se))
      note_noise "round $r nginx" "$st" "$ot"
      n_rps[r]=$rps n_p50[r]=$p50 n_p99[r]=$p99 n_cpu[r]=$cpu n_st[r]="$st% / $ot%"
    else
      p_rows[r]=$(log_rows)
      run_wrk posthorn "r$r-posthorn" "$DURATION" "${wrk_ph[@]}" || die "round $r: the posthorn run failed"
      read -r rps p50 p99 rq n2 se cpu st ot <<<"$W"
      account_posthorn "$rq" "$n2" "$se" "$CONNECTIONS"
      note_noise "round $r posthorn" "$st" "$ot"
      p_rps[r]=$rps p_p50[r]=$p50 p_p99[r]=$p99 p_cpu[r]=$cpu p_st[r]="$st% / $ot%"
    fi
  done
done

med_n_rps=$(median "${n_rps[@]}")
med_n_p50=$(median "${n_p50[@]}")
med_n_p99=$(median "${n_p99[@]}")
med_n_cpu=$(median "${n_cpu[@]}")
med_p_rps=$(median "${p_rps[@]}")
med_p_p50=$(median "${p_p50[@]}")
med_p_p99=$(median "${p_p99[@]}")
med_p_cpu=$(median "${p_cpu[@]}")

# Moderate load: wrk's delay() hook, with a wall clock from LuaJIT's ffi, hands out
# request slots at a fixed rate per wrk thread (a slot missed is skipped, not made up).
cat >"$tmp/pace.lua" <<'LUA'
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
int clock_gettime(int clk_id, bench_timespec *tp);
]]
local ts = ffi.new("bench_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end
local interval, due
function init(args)
  interval = 1000 / tonumber(args[1]) -- args[1]: requests per second for this thread
end
function delay()
  local now = now_ms()
  due = math.max((due or now) + interval, now)
  return math.floor(due - now + 0.5)
end
LUA
# Of the last round's maximum, not the median one: the table only grows, and so does the
# cost of each request.
last_p_rps=${p_rps[ROUNDS]}
target_rps=$(fmt '%.0f' "$(calc "$last_p_rps * $PACED_FRACTION")")
per_thread=$(calc "$target_rps / $THREADS")
mod_kind=paced
mod_cmd="wrk --latency -t$THREADS -c$CONNECTIONS -d${DURATION}s -s pace.lua -H \"Authorization: Bearer \$KEY\" 'http://127.0.0.1:\$PORT$ph_path' $(fmt '%.1f' "$per_thread")"
say "moderate load: paced to ~$target_rps req/s (${DURATION}s)"
m_rows=$(log_rows)
paced_ok=0
uncounted_run=0 # a run whose requests wrk did not report: the row count has no upper bound
if run_wrk posthorn moderate "$DURATION" -s "$tmp/pace.lua" "${wrk_ph[@]}" "$per_thread"; then
  read -r m_rps m_p50 m_p99 rq n2 se m_cpu m_st m_ot <<<"$W"
  account_posthorn "$rq" "$n2" "$se" "$CONNECTIONS"
  # wrk reports a script error on stderr and runs on without the script.
  if grep -qF "$tmp/pace.lua:" "$tmp/wrk-moderate.txt"; then
    say "wrk could not run the pacing script:"
    grep -F "$tmp/pace.lua:" "$tmp/wrk-moderate.txt" | head -n 3 >&2
  elif awk -v a="$m_rps" -v t="$target_rps" 'BEGIN { exit !(a > 1.25 * t) }'; then
    say "the pacing did not hold: $m_rps req/s for a target of $target_rps"
  else
    paced_ok=1
    note_noise "paced load" "$m_st" "$m_ot"
  fi
else
  uncounted_run=1
fi
if ((!paced_ok)); then
  say "measuring light load (-c$LIGHT_CONNECTIONS) instead of paced load"
  mod_kind=light
  mod_cmd="wrk --latency -t$THREADS -c$LIGHT_CONNECTIONS -d${DURATION}s -H \"Authorization: Bearer \$KEY\" 'http://127.0.0.1:\$PORT$ph_path'"
  m_rows=$(log_rows)
  run_wrk posthorn light "$DURATION" -t"$THREADS" -c"$LIGHT_CONNECTIONS" -H "$auth" "$ph_url" ||
    die "the light-load run failed"
  read -r m_rps m_p50 m_p99 rq n2 se m_cpu m_st m_ot <<<"$W"
  account_posthorn "$rq" "$n2" "$se" "$LIGHT_CONNECTIONS"
  note_noise "light load" "$m_st" "$m_ot"
fi

# ---- the request log ---------------------------------------------------------------

sleep 1 # let the last group commit land
rows_live=$(log_rows)
api_body=$(curl -s --max-time 10 -H "$auth" "$ph_url" || true)
extra_requests=$((extra_requests + 1))
api_total=$(sed -n 's/.*"total":\([0-9]*\).*/\1/p' <<<"$api_body")
wal_bytes=$(stat -c %s "$db-wal" 2>/dev/null || echo 0)
db_bytes=$(stat -c %s "$db" 2>/dev/null || echo 0)

say "stopping posthorn (SIGTERM)"
stop_posthorn
rows=$(log_rows)
status_counts=$(sqlite3 "$db" '.timeout 10000' \
  "SELECT status || ': ' || COUNT(*) FROM request_logs GROUP BY status ORDER BY status;" | paste -sd, - | sed 's/,/, /g')
server_problems=$(grep -Ec ' (warning|error|critical) ' "$tmp/posthorn.log" || true)
stop_nginx

expected=$((ph_requests + extra_requests))
# wrk counts the responses it read; requests in flight when a run ends are answered and
# logged by the server but not counted by wrk: at most one per connection and run.
max_expected=$((expected + ph_connections))

problems=()
[[ $ph_exit == 0 ]] || problems+=("posthorn exited with status $ph_exit after SIGTERM")
((ph_non2xx == 0)) || problems+=("wrk saw $ph_non2xx non-2xx/3xx responses from posthorn")
((ph_sockerr == 0)) || problems+=("wrk saw $ph_sockerr socket errors (connect/read/write/timeout) against posthorn")
((nginx_non2xx == 0 && nginx_sockerr == 0)) ||
  problems+=("nginx: $nginx_non2xx non-2xx/3xx responses, $nginx_sockerr socket errors")
((rows >= expected)) || problems+=("request log lost rows: $rows rows for $expected requests answered")
((uncounted_run || rows <= max_expected)) || problems+=("request log has $rows rows, more than the $max_expected requests that can have been made")
((server_problems == 0)) || problems+=("posthorn logged $server_problems warning/error lines")
if [[ -z $api_total ]]; then
  problems+=("GET $ph_path after the runs did not answer a pagination total: ${api_body:0:200}")
elif ((api_total < rows_live)); then
  problems+=("GET $ph_path after the runs answered pagination.total = $api_total while the table held $rows_live committed rows: the read sees a stale snapshot, so the per-request COUNT(*) did not scan the growing table")
fi

# ---- report ------------------------------------------------------------------------

ratio() { fmt '%.3g' "$(calc "$1 / $2")"; } # 3 significant digits
thousands() { printf "%'d" "$1" 2>/dev/null || echo "$1"; }

section="$tmp/section.md"
{
  echo "## HTTP: authenticated \`GET /v1/logs?limit=1\` vs nginx static 204"
  echo
  echo "Generated by \`bench/http_logs.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC')."
  echo
  echo "- Machine: $nproc_n CPUs, $cpu_model; $os_name, kernel $(uname -r); load average $load_at_start at the start."
  echo "- Software: posthorn $ph_commit (\`$PH_BIN\`, sha256 $ph_sha…), nginx $nginx_version, wrk $wrk_version."
  echo "- Load: \`wrk --latency -t$THREADS -c$CONNECTIONS -d${DURATION}s\` on 127.0.0.1, client and servers on the same $nproc_n CPUs;"
  echo "  $ROUNDS rounds, nginx and posthorn alternating (nginx first in odd rounds), after ${WARMUP}s of warm-up each."
  echo "- nginx: private config, \`worker_processes 2\`, \`access_log off\`, \`return 204\`, keep-alive unlimited."
  echo "- posthorn: fresh data dir (SQLite, WAL, synchronous=FULL), one account and key; every"
  echo "  request is also appended to the request log, so the table grows during the run."
  echo
  echo "Reproduce: \`make bench\` (installs wrk and nginx-light, builds, runs every benchmark) or,"
  echo "with the binary built, \`ROUNDS=$ROUNDS bench/http_logs.sh\`. The runs it makes:"
  echo
  echo '```'
  echo "wrk --latency -t$THREADS -c$CONNECTIONS -d${DURATION}s http://127.0.0.1:\$NGINX_PORT/204"
  echo "wrk --latency -t$THREADS -c$CONNECTIONS -d${DURATION}s -H \"Authorization: Bearer \$KEY\" 'http://127.0.0.1:\$PORT$ph_path'"
  echo "$mod_cmd"
  echo '```'
  echo
  echo "Latencies in ms; CPU = server CPU time (user+system) per request, in ms; noise = the machine's"
  echo "CPU steal / CPU used by other processes than the server and wrk, in % of all CPUs, during"
  echo "the run; rows = request-log rows when the posthorn run started."
  echo
  echo "| round | nginx req/s | p50 | p99 | CPU | noise | posthorn req/s | p50 | p99 | CPU | noise | rows | req/s posthorn/nginx |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for ((r = 1; r <= ROUNDS; r++)); do
    echo "| $r | $(int "${n_rps[r]}") | $(ms "${n_p50[r]}") | $(ms "${n_p99[r]}") | $(ms "${n_cpu[r]}") | ${n_st[r]} |" \
      "$(int "${p_rps[r]}") | $(ms "${p_p50[r]}") | $(ms "${p_p99[r]}") | $(ms "${p_cpu[r]}") | ${p_st[r]} | ${p_rows[r]} |" \
      "$(ratio "${p_rps[r]}" "${n_rps[r]}") |"
  done
  echo "| **median** | **$(int "$med_n_rps")** | **$(ms "$med_n_p50")** | **$(ms "$med_n_p99")** | $(ms "$med_n_cpu") | |" \
    "**$(int "$med_p_rps")** | **$(ms "$med_p_p50")** | **$(ms "$med_p_p99")** | $(ms "$med_p_cpu") | | |" \
    "**$(ratio "$med_p_rps" "$med_n_rps")** |"
  echo
  echo "Medians, posthorn/nginx: req/s $(ratio "$med_p_rps" "$med_n_rps")×, p50 $(ratio "$med_p_p50" "$med_n_p50")×," \
    "p99 $(ratio "$med_p_p99" "$med_n_p99")×, CPU per request $(ratio "$med_p_cpu" "$med_n_cpu")×."
  echo
  if [[ ${#noisy[@]} -gt 0 ]]; then
    echo "Disturbed runs (steal or other processes above $NOISY_PCT% of the machine; their figures"
    echo "understate what the machine can do): $(printf '%s; ' "${noisy[@]}" | sed 's/; $//')."
    echo
  fi
  if [[ $mod_kind == paced ]]; then
    echo "Moderate load (posthorn only, paced to $PACED_FRACTION × the max of round $ROUNDS = $target_rps req/s by wrk's"
    echo "\`delay()\` hook; closed loop, so not a constant-rate generator like wrk2):"
    echo "$(int "$m_rps") req/s achieved ($(fmt '%.0f' "$(calc "100 * $m_rps / $last_p_rps")")% of the max of round $ROUNDS), p50 $(ms "$m_p50") ms, p99 $(ms "$m_p99") ms,"
    echo "CPU $(ms "$m_cpu") ms/request, noise $m_st% / $m_ot%; $m_rows rows at start."
  else
    echo "Light load (posthorn only, -c$LIGHT_CONNECTIONS; pacing to $target_rps req/s did not work with this wrk):"
    echo "$(int "$m_rps") req/s ($(fmt '%.0f' "$(calc "100 * $m_rps / $last_p_rps")")% of the max of round $ROUNDS), p50 $(ms "$m_p50") ms, p99 $(ms "$m_p99") ms,"
    echo "CPU $(ms "$m_cpu") ms/request, noise $m_st% / $m_ot%; $m_rows rows at start."
  fi
  echo
  echo "Request log after posthorn stopped (SIGTERM flushes it), counted with sqlite3: **$(thousands "$rows") rows**"
  echo "(status $status_counts) for $(thousands "$expected") requests answered = $(thousands "$ph_requests") counted by wrk"
  echo "over all posthorn runs (warm-up and moderate load included) + $extra_requests made with curl;"
  echo "wrk does not count the requests in flight when a run ends, so up to $ph_connections more rows can be right."
  if ((rows >= expected && rows <= max_expected)); then
    echo "Every answered request was logged durably ($((rows - expected)) in flight at run ends)."
  fi
  echo "Before the shutdown: $(thousands "$rows_live") rows committed, database $((db_bytes / 1024)) KiB + WAL $((wal_bytes / 1024)) KiB;"
  echo "\`GET $ph_path\` answered \`pagination.total\` = ${api_total:-?}."
  echo
  if [[ ${#problems[@]} -gt 0 ]]; then
    echo "**Problems observed in this run:**"
    echo
    for p in "${problems[@]}"; do echo "- $p"; done
  else
    echo "No problems observed: no non-2xx responses, no socket errors, no warnings in the server log."
  fi
} >"$section"

echo
cat "$section"
echo

[[ -z $RESULTS ]] || write_results_section http_logs "$section"

if [[ ${#problems[@]} -gt 0 ]]; then
  say "posthorn misbehaved during the benchmark:"
  for p in "${problems[@]}"; do say "  - $p"; done
  if ((server_problems > 0)); then
    say "server log (warnings and errors, first 20):"
    grep -E ' (warning|error|critical) ' "$tmp/posthorn.log" | head -n 20 >&2 || true
  fi
  exit 1
fi
