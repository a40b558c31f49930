#!/usr/bin/env bash
# Benchmark (issue 26): posthorn on PostgreSQL, each figure next to its peer in the same run,
# on loopback: durable `POST /v1/emails` on PostgreSQL vs on SQLite vs nginx answering the
# same POST with 204; one node vs two nodes on the same PostgreSQL database; and delivery
# end to end on PostgreSQL vs Postfix relaying to the same sink.
#
# What one run does:
#   1. starts one durable PostgreSQL server (bench/lib.sh start_pg: tools/pg_test_server.py
#      with PH_PG_DURABLE=1, so fsync, synchronous_commit and full_page_writes are on; as
#      root it runs as nobody) in a temporary directory, nginx with a private configuration
#      (start_nginx_post), dnsmasq, and two posthorns as bench/send_emails.sh starts one
#      (start_posthorn_with_verified_domain: a fresh data dir each, one account and key, the
#      domain mail.example.com VERIFIED against dnsmasq, delivery held by a loopback relay
#      that never answers, so that what is measured is acceptance alone): one on SQLite, one
#      on a fresh PostgreSQL database (POSTHORN_DATABASE_URL);
#   2. writes once to the machine's free memory (touch_free_memory), warms each up, then,
#      for $ROUNDS rounds in rotating order, loads nginx, posthorn on SQLite and posthorn on
#      PostgreSQL with `wrk --latency -t$THREADS -c$CONNECTIONS -d${DURATION}s` and the same
#      1 KB POST as bench/send_emails.sh; stops both posthorns (SIGTERM) and counts, in each
#      store, the emails and the request log's answers against the 200s wrk saw: every 200
#      must be a stored email;
#   3. starts two posthorns on one new PostgreSQL database (their own data dirs and node
#      ids, one master key file), and for $ROUNDS rounds, alternating: one node loaded by
#      one wrk with the full load, and both nodes loaded at once by two wrk processes with
#      half the threads and connections each (the sum is the two-node rate); then the same
#      count of stored emails against the 200s over both nodes;
#   4. runs bench/delivery.sh with STORE=pg on the same server (a fresh database; the free
#      memory, written at the start of this run, not again): $COUNT
#      messages of $TEXT_BYTES bytes per run, $ROUNDS rounds, posthorn (DKIM-signing) and
#      Postfix alternating, each to the same smtp-sink; needs root (Postfix's master);
#   5. prints a markdown section and replaces the pg section of $RESULTS.
#
# Options (environment): ROUNDS=3 DURATION=10 WARMUP=3 THREADS=2 CONNECTIONS=64
#   TEXT_BYTES=1024 COUNT=5000 (delivery: messages per run) DELIVERY=1 (0: leave part 4 out;
#   then root is not needed) NOISY_PCT=10 PH_BIN=build/posthorn TOUCH_MEMORY=1 (0: do not
#   write to the free memory first; bench/delivery.sh, run from here, never does)
#   RESULTS=bench/RESULTS.md (empty: do not write it) KEEP_TMP=1 (keep the temp dir).
#   A smoke test: ROUNDS=1 DURATION=3 WARMUP=1 COUNT=500 TOUCH_MEMORY=0 RESULTS= bench/pg.sh
# posthorn runs with limits.send_rate_per_minute = 100000000, as in bench/send_emails.sh (on
# PostgreSQL the rate is counted in the database: part of what it costs). Inherited
# POSTHORN_* variables are ignored.
# Exit status: 0 ok; 1 posthorn misbehaved (the results are written all the same, with the
# problems listed); 2 bad usage or a missing tool.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-64}
TEXT_BYTES=${TEXT_BYTES:-1024}
COUNT=${COUNT:-5000}
DELIVERY=${DELIVERY:-1}
NOISY_PCT=${NOISY_PCT:-10}
PH_BIN=${PH_BIN:-build/posthorn}
RESULTS=${RESULTS-bench/RESULTS.md}
SEND_RATE=100000000 # limits.send_rate_per_minute: its maximum, so that nothing is throttled
DOMAIN=mail.example.com
FROM="Bench <bench@$DOMAIN>"
TO=user@example.net
DKIM_ZONE=dkim.posthorn.test
SPF_INCLUDE=spf.posthorn.test
INBOUND_MX=mx.posthorn.test

say() { printf '[pg] %s\n' "$*" >&2; }
for v in ROUNDS DURATION WARMUP THREADS CONNECTIONS TEXT_BYTES COUNT NOISY_PCT; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')" 2
done
[[ $DELIVERY =~ ^[01]$ ]] || die "DELIVERY must be 0 or 1" 2
((CONNECTIONS >= 2 && CONNECTIONS % 2 == 0)) || die "CONNECTIONS must be even: two nodes get half each" 2
((THREADS <= CONNECTIONS / 2)) || die "THREADS must be at most CONNECTIONS / 2" 2
if ((DELIVERY)) && [[ $(id -u) != 0 ]]; then
  die "run as root (the delivery part starts Postfix, whose master must be started by root), or set DELIVERY=0" 2
fi

export PATH="$PATH:/usr/sbin:/sbin"
missing=()
for tool in wrk nginx sqlite3 psql curl timeout awk sort pgrep; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
DNSMASQ=$(command -v dnsmasq 2>/dev/null || echo /usr/sbin/dnsmasq)
[[ -x $DNSMASQ ]] || missing+=(dnsmasq)
PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3 2>/dev/null || echo)
[[ -n $PY ]] || missing+=(python3)
if [[ ${#missing[@]} -gt 0 ]]; then
  die "missing tools: ${missing[*]} — install them with scripts/install-deps.sh --bench (wrk, nginx-light, postfix; sqlite3, postgresql-15 with psql, curl, python3, dnsmasq-base from the base set)" 2
fi
[[ -x $PH_BIN ]] || die "no posthorn binary at $PH_BIN — build it first (make build), or set PH_BIN" 2
PH_BIN=$(realpath "$PH_BIN") # bench/delivery.sh runs it too

while read -r name; do unset "$name"; done < <(compgen -e | grep '^POSTHORN_' || true)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/posthorn-bench.XXXXXX")
# The PostgreSQL server runs as nobody when this runs as root; Postfix (part 4) as postfix.
chmod 755 "$tmp"
nginx_pid=
ph_pid=
ph_exit=
dns_pid=
hold_pid=
pg_pid=
bg_pid=
delivery_pid=
watch_pid=
wrk_pids=()
# The posthorns of the run, by name (sqlite, pg, node1, node2): their PIDs.
declare -A ph_pids

# ---- process control ---------------------------------------------------------------

cleanup() {
  local rc=$? p n
  trap - EXIT INT TERM
  if [[ -n $bg_pid ]]; then kill -TERM "$bg_pid" 2>/dev/null || true; fi
  if [[ -n $watch_pid ]]; then kill -TERM "$watch_pid" 2>/dev/null || true; fi
  for p in "${wrk_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  if [[ -n $delivery_pid ]]; then
    kill -TERM "$delivery_pid" 2>/dev/null || true
    wait "$delivery_pid" 2>/dev/null || true
  fi
  for n in "${!ph_pids[@]}"; do
    [[ -z ${ph_pids[$n]} ]] || stop_posthorn_pid "${ph_pids[$n]}"
  done
  stop_nginx
  stop_dnsmasq
  stop_hold
  stop_pg
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

# Builds on this machine (it is shared with them): every 2 s, one line in builds.txt, "1" if a
# build or check (ninja, cc1plus, clang-tidy, ctest) is running then, else "0"; from the first
# measured run to the end. The runs' own noise figures catch every other disturbance.
build_running() {
  local p
  for p in ninja cc1plus clang-tidy clang-tidy-14 ctest; do
    pgrep -x "$p" >/dev/null 2>&1 && return 0
  done
  return 1
}
watch_builds() {
  while :; do
    if build_running; then echo 1; else echo 0; fi
    sleep 2
  done >>"$tmp/builds.txt" 2>/dev/null &
  watch_pid=$!
}

# ---- measurements ------------------------------------------------------------------

# measure LABEL SECONDS LOAD...: runs one wrk per LOAD at once ("THREADS CONNECTIONS URL
# NAME": NAME is a posthorn's name, or nginx), each for SECONDS with the POST of post.lua and
# the key of that posthorn (nginx: the SQLite one's). The CPU time counted is that of the
# processes in the global arrays m_pids (each alone) and m_trees (each with its children:
# the PostgreSQL server). Sets M to "req_per_s p50 p99 requests non_2xx socket_errors
# cpu_own_ms cpu_tree_ms steal_pct other_pct" (req/s summed over the loads, p50 and p99 the
# worst load's, CPU per request answered) and ML[i] to each load's "req_per_s p50 p99
# requests non_2xx socket_errors". Exits when a posthorn died during the run.
M=
declare -a ML m_pids m_trees
m_pids=()
m_trees=()
measure() {
  local label=$1 secs=$2 i out rc=0 m0 m1 c0 c1 t0 t1 w0 w1 parsed reqs_all=0 rps_all=0 p50=0 p99=0
  local n2_all=0 se_all=0 rps q50 q99 reqs n2 se n p th co url tck cpu_own cpu_tree noise
  shift 2
  local loads=("$@")
  M=
  ML=()
  m0=$(machine_ticks)
  c0=$(cpu_ticks "${m_pids[@]}")
  t0=0
  for p in ${m_trees[@]+"${m_trees[@]}"}; do t0=$((t0 + $(tree_ticks "$p"))); done
  w0=$(child_ticks)
  wrk_pids=()
  for ((i = 0; i < ${#loads[@]}; i++)); do
    read -r th co url n <<<"${loads[i]}"
    out="$tmp/wrk-$label-$i.txt"
    timeout --kill-after=5 $((secs + 30)) wrk --latency -d"${secs}s" -t"$th" -c"$co" -s "$tmp/post.lua" \
      -H "${auths[$n]}" "$url" >"$out" 2>&1 &
    wrk_pids+=($!)
  done
  for p in "${wrk_pids[@]}"; do wait "$p" || rc=$?; done
  wrk_pids=()
  c1=$(cpu_ticks "${m_pids[@]}")
  t1=0
  for p in ${m_trees[@]+"${m_trees[@]}"}; do t1=$((t1 + $(tree_ticks "$p"))); done
  w1=$(child_ticks)
  m1=$(machine_ticks)
  for n in "${!ph_pids[@]}"; do
    [[ -n ${ph_pids[$n]} ]] || continue
    if ! kill -0 "${ph_pids[$n]}" 2>/dev/null; then
      say "posthorn '$n' died during the run '$label'; its log ends with:"
      tail -n 30 "${logs[$n]}" >&2 || true
      exit 1
    fi
  done
  if ((rc != 0)); then
    cat "$tmp/wrk-$label-"*.txt >&2
    say "wrk failed ($label)"
    return 1
  fi
  for ((i = 0; i < ${#loads[@]}; i++)); do
    out="$tmp/wrk-$label-$i.txt"
    if ! parsed=$(parse_wrk "$out"); then
      cat "$out" >&2
      say "cannot parse the wrk output ($label)"
      return 1
    fi
    ML[i]=$parsed
    read -r rps q50 q99 reqs n2 se <<<"$parsed"
    rps_all=$(calc "$rps_all + $rps")
    reqs_all=$((reqs_all + reqs))
    n2_all=$((n2_all + n2))
    se_all=$((se_all + se))
    p50=$(awk -v a="$p50" -v b="$q50" 'BEGIN { print (b > a ? b : a) }')
    p99=$(awk -v a="$p99" -v b="$q99" 'BEGIN { print (b > a ? b : a) }')
  done
  ((reqs_all > 0)) || reqs_all=1
  tck=$(getconf CLK_TCK)
  cpu_own=$(calc "($c1 - $c0) * 1000 / $tck / $reqs_all")
  cpu_tree=$(calc "($t1 - $t0) * 1000 / $tck / $reqs_all")
  noise=$(noise_between "$m0" "$m1" $((c1 - c0 + t1 - t0 + w1 - w0)))
  M="$rps_all $p50 $p99 $reqs_all $n2_all $se_all $cpu_own $cpu_tree $noise"
}

# Every run against a store: its requests, non-2xx, socket errors and connections (wrk does
# not count the requests in flight when a run ends: at most one per connection and run).
declare -A acc_req acc_n2 acc_se acc_conn acc_extra
account() { # STORE REQUESTS NON2XX SOCKERR CONNECTIONS
  acc_req[$1]=$((${acc_req[$1]:-0} + $2))
  acc_n2[$1]=$((${acc_n2[$1]:-0} + $3))
  acc_se[$1]=$((${acc_se[$1]:-0} + $4))
  acc_conn[$1]=$((${acc_conn[$1]:-0} + $5))
}
# account_loads STORE LOAD...: accounts each load of the last measure.
account_loads() {
  local st=$1 i rq n2 se co
  shift
  local loads=("$@")
  for ((i = 0; i < ${#loads[@]}; i++)); do
    read -r _ _ _ rq n2 se <<<"${ML[i]}"
    read -r _ co _ <<<"${loads[i]}"
    account "$st" "$rq" "$n2" "$se" "$co"
  done
}

# ---- the machine and the software ---------------------------------------------------

nproc_n=$(nproc)
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
[[ -n $cpu_model ]] || cpu_model=unknown
# shellcheck disable=SC1091
os_name=$( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || echo unknown)
wrk_version=$( (wrk -v 2>&1 || true) | awk 'NR == 1 { print $2 }')
ph_commit=$(binary_commit)
# A copy, so that a rebuild during the run cannot change the binary under the benchmark.
cp "$PH_BIN" "$tmp/posthorn"
ph_sha=$(sha256sum "$tmp/posthorn" | cut -c1-12)
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
disk=$(df -P "$tmp" | awk 'NR == 2 { print $1 }')
fs_type=$( (findmnt -n -o FSTYPE -T "$tmp" 2>/dev/null || stat -f -c %T "$tmp") | head -n1)
case $fs_type in
  tmpfs | ramfs) say "warning: $tmp is on $fs_type: fsync does nothing there, set TMPDIR to a directory on a disk" ;;
esac

# ---- the request -------------------------------------------------------------------

write_send_body "$tmp/body.json" "$TEXT_BYTES" "posthorn benchmark: a 1 KB text email"
body_bytes=$(stat -c %s "$tmp/body.json")
write_post_lua "$tmp/body.json" "$tmp/post.lua"

# ---- the servers -------------------------------------------------------------------

start_pg
pg_disk=$(df -P "$pg_dir" | awk 'NR == 2 { print $1 }')
pg_conf=$(pg_settings)
start_nginx_post "$tmp/body.json"

declare -A urls auths logs dbs
# remember NAME: keeps what start_posthorn_with_verified_domain / ph_serve set for NAME.
remember() {
  ph_pids[$1]=$ph_pid
  urls[$1]=$ph_url
  auths[$1]=$auth
  logs[$1]=$ph_log
  dbs[$1]=$db
  ph_pid=
}
# first_send NAME: one send with curl, answered 200, readable and QUEUED (delivery is held).
first_send() {
  local code id st
  base=${urls[$1]%/v1/emails}
  auth=${auths[$1]}
  code=$(api POST /v1/emails "$tmp/send.json" "$(cat "$tmp/body.json")")
  id=$(jfield "$tmp/send.json" id)
  [[ $code == 200 && $id == em_* ]] || die "$1: POST /v1/emails answered $code: $(head -c 500 "$tmp/send.json")"
  code=$(api GET "/v1/emails/$id" "$tmp/first.json")
  st=$(jfield "$tmp/first.json" status)
  [[ $code == 200 && $st == QUEUED ]] ||
    die "$1: GET /v1/emails/$id answered $code, status ${st:-?} (QUEUED expected: delivery is held): $(head -c 500 "$tmp/first.json")"
  acc_extra[$1]=$((${acc_extra[$1]:-0} + 1))
  first_id=$id
}

ph_extra_env=()
start_posthorn_with_verified_domain sqlite
remember sqlite
first_send sqlite
raw_bytes=$(store_sql "${dbs[sqlite]}" "SELECT length(b.raw) FROM emails e JOIN email_bodies b ON b.id = e.body_id WHERE e.id = '$first_id';")

sends_url=$(pg_create_db posthorn_sends)
ph_extra_env=("POSTHORN_DATABASE_URL=$sends_url")
start_posthorn_with_verified_domain pg
remember pg
first_send pg
raw_bytes_pg=$(store_sql "${dbs[pg]}" "SELECT length(raw) FROM emails WHERE id = '$first_id'")

# ---- part 1: durable sends, nginx vs SQLite vs PostgreSQL -----------------------------

noisy=()
problems=()
touch_free_memory
watch_builds

# run_target TARGET LABEL SECONDS: one full-load run of nginx, sqlite or pg; sets M.
run_target() {
  local t=$1
  wait_quiet
  case $t in
    nginx)
      # shellcheck disable=SC2207 # pids are words without spaces
      m_pids=("$nginx_pid" $(pgrep -P "$nginx_pid" || true))
      m_trees=()
      measure "$2" "$3" "$THREADS $CONNECTIONS $nginx_url sqlite" || die "the run $2 failed"
      read -r _ _ _ _ n2 se _ _ _ _ <<<"$M"
      nginx_n2=$((nginx_n2 + n2))
      nginx_se=$((nginx_se + se))
      ;;
    sqlite)
      m_pids=("${ph_pids[sqlite]}")
      m_trees=()
      measure "$2" "$3" "$THREADS $CONNECTIONS ${urls[sqlite]} sqlite" || die "the run $2 failed"
      account_loads sqlite "$THREADS $CONNECTIONS"
      ;;
    pg)
      m_pids=("${ph_pids[pg]}")
      m_trees=("$pg_pid")
      measure "$2" "$3" "$THREADS $CONNECTIONS ${urls[pg]} pg" || die "the run $2 failed"
      account_loads pg "$THREADS $CONNECTIONS"
      ;;
  esac
}
nginx_n2=0
nginx_se=0
say "part 1: warm-up, ${WARMUP}s each"
for t in nginx sqlite pg; do run_target "$t" "warmup-$t" "$WARMUP"; done

declare -A r1
kinds=(nginx sqlite pg)
for ((r = 1; r <= ROUNDS; r++)); do
  for ((i = 0; i < 3; i++)); do
    t=${kinds[(i + r - 1) % 3]}
    say "part 1, round $r/$ROUNDS: $t (${DURATION}s)"
    run_target "$t" "r$r-$t" "$DURATION"
    r1[$t,$r]=$M
    read -r rps p50 p99 _ n2 se co ct st ot <<<"$M"
    note_noise "sends round $r $t" "$st" "$ot"
    say "  $(int "$rps") req/s, p50 $(ms "$p50") ms, p99 $(ms "$p99") ms; CPU $(ms "$co") + $(ms "$ct") ms/req; noise $st% / $ot%"
  done
done

# med1 TARGET FIELD: the median over the rounds of a field (1-based) of part 1's M.
med1() {
  local vals=() r
  for ((r = 1; r <= ROUNDS; r++)); do vals+=("$(awk -v k="$2" '{ print $k }' <<<"${r1[$1,$r]}")"); done
  median "${vals[@]}"
}

# check_store NAME...: stops the posthorns named (SIGTERM) and checks their store (the first
# one's; they share it) against what wrk saw of them, accounted under the first name. Sets
# CK to a line of text for the report and adds to problems.
check_store() {
  local st=$1 n rows_live rows rows_rcpt answered max log_status log_200 warn=0 exit_bad=() dbu=${dbs[$1]}
  sleep 1 # the last group commit
  rows_live=$(store_sql "$dbu" 'SELECT COUNT(*) FROM emails')
  for n in "$@"; do
    stop_posthorn_pid "${ph_pids[$n]}"
    ph_pids[$n]=
    [[ $ph_exit == 0 ]] || exit_bad+=("$n: $ph_exit")
    warn=$((warn + $(grep -Ec ' (warning|error|critical) ' "${logs[$n]}" || true)))
  done
  read -r rows rows_rcpt < <(store_sql "$dbu" 'SELECT (SELECT COUNT(*) FROM emails), (SELECT COUNT(*) FROM recipients)')
  log_status=$(store_sql "$dbu" "SELECT status || ': ' || COUNT(*) FROM request_logs WHERE method = 'POST' AND url = '/v1/emails' GROUP BY status ORDER BY status" | paste -sd, - | sed 's/,/, /g')
  log_200=$(store_sql "$dbu" "SELECT COUNT(*) FROM request_logs WHERE method = 'POST' AND url = '/v1/emails' AND status = 200")
  answered=$((acc_req[$st] - acc_n2[$st] + ${acc_extra[$st]:-0}))
  max=$((answered + acc_conn[$st]))
  local label="$*"
  label=${label// / and }
  [[ ${#exit_bad[@]} == 0 ]] || problems+=("$label: exit status after SIGTERM ${exit_bad[*]}")
  ((acc_n2[$st] == 0)) || problems+=("$label: wrk saw ${acc_n2[$st]} non-2xx/3xx responses (request log, POST /v1/emails by status: $log_status)")
  ((acc_se[$st] == 0)) || problems+=("$label: wrk saw ${acc_se[$st]} socket errors")
  ((rows >= answered)) || problems+=("$label: emails lost: $rows rows in emails for $answered sends answered 200")
  ((rows <= max)) || problems+=("$label: $rows rows in emails, more than the $max sends that can have been answered 200")
  ((rows == rows_live)) || problems+=("$label: emails held $rows_live rows before the shutdown and $rows after it")
  ((rows_rcpt == rows)) || problems+=("$label: $rows emails but $rows_rcpt recipients (one each expected)")
  ((log_200 == rows)) || problems+=("$label: the request log has $log_200 POST /v1/emails answered 200 for $rows emails")
  ((warn == 0)) || problems+=("$label: $warn warning/error lines in the server log")
  CK="$(printf "%'d" "$rows") emails (as many recipients: $rows_rcpt) for $(printf "%'d" "$answered") sends answered 200"
  CK+=" ($((acc_req[$st] - acc_n2[$st])) counted by wrk, warm-ups included, + ${acc_extra[$st]:-0} with curl; up to ${acc_conn[$st]} more may be right: requests in flight at run ends);"
  CK+=" request log, POST /v1/emails by status: ${log_status:-none}"
  if ((rows >= answered && rows <= max && rows == rows_live && log_200 == rows)); then
    CK+=". **Every 200 is a stored email.**"
  else
    CK+=". **Not every 200 is accounted for** (see the problems)."
  fi
}

held=$(held_sessions)
check_store sqlite
ck_sqlite=$CK
check_store pg
ck_pg=$CK
psql -XAtq "$pg_admin_url" -c 'DROP DATABASE posthorn_sends' >/dev/null 2>&1 || true

# ---- part 2: one node vs two nodes on one database ----------------------------------

say "part 2: two nodes on one PostgreSQL database"
nodes_url=$(pg_create_db posthorn_nodes)
common=("POSTHORN_DATABASE_URL=$nodes_url" "POSTHORN_SERVER_MASTER_KEY_FILE=$tmp/master.key")
ph_extra_env=("${common[@]}" "POSTHORN_SERVER_NODE_ID=bench-node-1")
start_posthorn_with_verified_domain node1
remember node1
ph_extra_env=("${common[@]}" "POSTHORN_SERVER_NODE_ID=bench-node-2")
ph_prepare node2
ph_serve # the key ($auth) is node 1's: the same database
remember node2
auths[node2]=${auths[node1]}
first_send node1
first_send node2 # the domain verified through node 1, the key made there: the shared store
acc_extra[node1]=$((acc_extra[node1] + acc_extra[node2]))

half_t=$((THREADS / 2))
((half_t >= 1)) || half_t=1
half_c=$((CONNECTIONS / 2))
m_pids=("${ph_pids[node1]}" "${ph_pids[node2]}")
m_trees=("$pg_pid")
one_load="$THREADS $CONNECTIONS ${urls[node1]} node1"
two_loads=("$half_t $half_c ${urls[node1]} node1" "$half_t $half_c ${urls[node2]} node2")
run_nodes() { # one|two LABEL SECONDS
  wait_quiet
  if [[ $1 == one ]]; then
    measure "$2" "$3" "$one_load" || die "the run $2 failed"
    account_loads node1 "$one_load"
  else
    measure "$2" "$3" "${two_loads[@]}" || die "the run $2 failed"
    account_loads node1 "${two_loads[@]}"
  fi
}
say "part 2: warm-up, ${WARMUP}s each"
run_nodes one warmup-one "$WARMUP"
run_nodes two warmup-two "$WARMUP"
declare -A r2 r2a r2b
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2)); then order=(one two); else order=(two one); fi
  for k in "${order[@]}"; do
    say "part 2, round $r/$ROUNDS: $k node(s) (${DURATION}s)"
    run_nodes "$k" "r$r-$k" "$DURATION"
    r2[$k,$r]=$M
    if [[ $k == two ]]; then
      r2a[$r]=${ML[0]}
      r2b[$r]=${ML[1]}
    fi
    read -r rps p50 p99 _ n2 se co ct st ot <<<"$M"
    note_noise "nodes round $r $k" "$st" "$ot"
    say "  $(int "$rps") sends/s, p50 $(ms "$p50") ms, p99 $(ms "$p99") ms; CPU $(ms "$co") + $(ms "$ct") ms/send; noise $st% / $ot%"
  done
done
med2() { # one|two FIELD
  local vals=() r
  for ((r = 1; r <= ROUNDS; r++)); do vals+=("$(awk -v k="$2" '{ print $k }' <<<"${r2[$1,$r]}")"); done
  median "${vals[@]}"
}
# Which nodes' delivery engines claimed recipients (each claims a batch and waits at the
# holding relay): both, when the claims are shared out through the database.
lease_owners=$(store_sql "$nodes_url" "SELECT coalesce(lease_owner, '(none)') || ': ' || COUNT(*) FROM recipients GROUP BY lease_owner ORDER BY lease_owner NULLS LAST" | paste -sd, - | sed 's/,/, /g')
held_nodes=$(held_sessions)
check_store node1 node2
ck_nodes=$CK
psql -XAtq "$pg_admin_url" -c 'DROP DATABASE posthorn_nodes' >/dev/null 2>&1 || true
stop_nginx
stop_dnsmasq
stop_hold

# ---- part 3: delivery end to end, PostgreSQL vs Postfix -----------------------------

delivery_rc=
if ((DELIVERY)); then
  say "part 3: bench/delivery.sh with STORE=pg ($COUNT messages a run, $ROUNDS rounds)"
  env STORE=pg PG_URL="$pg_admin_url" PG_PID="$pg_pid" MESSAGES="$COUNT" ROUNDS="$ROUNDS" \
    SIZES="$TEXT_BYTES" RESULTS= SECTION_FILE="$tmp/delivery.md" SUMMARY_FILE="$tmp/delivery.sum" \
    PH_BIN="$PH_BIN" NOISY_PCT="$NOISY_PCT" TOUCH_MEMORY=0 KEEP_TMP= bench/delivery.sh >"$tmp/delivery.out" 2>&1 &
  delivery_pid=$!
  delivery_rc=0
  wait "$delivery_pid" || delivery_rc=$?
  delivery_pid=
  grep -E '^\[delivery\]' "$tmp/delivery.out" >&2 || true
  if [[ ! -s $tmp/delivery.sum ]]; then
    tail -n 40 "$tmp/delivery.out" >&2
    problems+=("bench/delivery.sh (STORE=pg) exited with status $delivery_rc and measured nothing: $(grep -E 'error' "$tmp/delivery.out" | tail -n 3 | tr '\n' ' ')")
  elif ((delivery_rc != 0)); then
    problems+=("bench/delivery.sh (STORE=pg) exited with status $delivery_rc: its problems are listed in its part below")
  fi
fi
stop_pg
kill -TERM "$watch_pid" 2>/dev/null || true
wait "$watch_pid" 2>/dev/null || true
watch_pid=

# ---- report ------------------------------------------------------------------------

ratio() { fmt '%.3g' "$(calc "$1 / $2")"; } # 3 significant digits
yes_no() { if awk "BEGIN { exit !($1) }"; then echo "**met**"; else echo "**not met**"; fi; }

n_rps=$(med1 nginx 1)
s_rps=$(med1 sqlite 1)
p_rps=$(med1 pg 1)
one_rps=$(med2 one 1)
two_rps=$(med2 two 1)
goal_sends=$(yes_no "$p_rps >= 0.5 * $s_rps")
samples=$(wc -l <"$tmp/builds.txt" 2>/dev/null || echo 0)
samples_build=$(grep -c '^1$' "$tmp/builds.txt" 2>/dev/null || true)
builds_text="a build or check (ninja, cc1plus, clang-tidy, ctest) running in ${samples_build:-0} of $samples samples, one every 2 s from the first measured run to the last"
n_disturbed=${#noisy[@]}
if [[ -s $tmp/delivery.out ]]; then
  # grep finds nothing in a quiet run: not a failure (set -e, pipefail)
  n_disturbed=$((n_disturbed + $({ grep -o 'other processes [0-9.]*%' "$tmp/delivery.md" 2>/dev/null || true; } | wc -l)))
fi
if ((${samples_build:-0} == 0 && n_disturbed == 0)); then
  quiet="quiet: no run disturbed (steal or other processes above $NOISY_PCT% of the machine), $builds_text"
else
  quiet="**noisy**: $n_disturbed runs disturbed (steal or other processes above $NOISY_PCT% of the machine: their figures are listed below), $builds_text"
fi
d_line=
if [[ -s $tmp/delivery.sum ]]; then
  read -r _ d_pf d_ph d_ratio d_met _ <"$tmp/delivery.sum"
  if [[ $d_ratio == - ]]; then
    d_line="not measured (a run failed: see below)"
  else
    d_line="$(int "$d_ph") msg/s on PostgreSQL vs Postfix $(int "$d_pf") msg/s: **$(fmt '%.3g' "$d_ratio")×**, goal at least 2×: $( ((d_met)) && echo "**met**" || echo "**not met**")"
  fi
fi

section="$tmp/section.md"
{
  echo "## PostgreSQL (issue 26): durable sends vs SQLite and nginx, one node vs two, delivery vs Postfix"
  echo
  echo "Generated by \`bench/pg.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'). Three parts, each measured side by side"
  echo "in this run; figures are comparable only within a part's table."
  echo
  echo "- Machine: $nproc_n CPUs, $cpu_model; $os_name, kernel $(uname -r); load average $load_at_start at the start;"
  echo "  $quiet."
  memory_line
  echo "- Software: posthorn $ph_commit (\`$PH_BIN\`, sha256 $ph_sha…), PostgreSQL $pg_version, nginx $nginx_version,"
  echo "  wrk $wrk_version, dnsmasq $dns_version."
  echo "- PostgreSQL: one server for the whole run on the same machine (its processes share the $nproc_n CPUs with"
  echo "  posthorn and the load; its data on $pg_disk, posthorn's data dirs on $disk, $fs_type), started by"
  echo "  \`tools/pg_test_server.py\` with \`PH_PG_DURABLE=1\`: $pg_conf;"
  echo "  PostgreSQL's defaults otherwise. A fresh database for each posthorn (one shared by the two nodes), reached"
  echo "  over TCP on 127.0.0.1 as the superuser \`postgres\`. CPU = user+system time per request answered: posthorn's,"
  echo "  then + that of PostgreSQL's processes (postmaster, backends, WAL writer, checkpointer...)."
  echo "- Request: \`POST /v1/emails\` with a $body_bytes-byte JSON body, $TEXT_BYTES bytes of text (stored as a"
  echo "  $raw_bytes-byte message on SQLite, $raw_bytes_pg on PostgreSQL), as in bench/send_emails.sh; the same bytes,"
  echo "  \`Authorization\` header included, to nginx (\`return 204\` after reading the body, \`worker_processes 2\`)."
  echo "- posthorn: fresh data dirs, one account and key, $DOMAIN verified against dnsmasq,"
  echo "  \`POSTHORN_LIMITS_SEND_RATE_PER_MINUTE=$SEND_RATE\` (on PostgreSQL the rate is counted in the database,"
  echo "  table \`send_counts\`). Each 200 comes after the commit holding the email is durable. Acceptance alone:"
  echo "  the delivery engine's relay is a loopback listener that never answers ($held sessions waiting after part 1)."
  echo "- Load: \`wrk --latency -t$THREADS -c$CONNECTIONS -d${DURATION}s -s post.lua\` on 127.0.0.1; $ROUNDS rounds in"
  echo "  rotating order after ${WARMUP}s warm-ups. noise = the machine's CPU steal / CPU of processes other than the"
  echo "  servers measured and wrk, in % of all CPUs, during the run."
  echo
  echo "Reproduce: with the binary built, as root, \`bench/pg.sh\` (\`ROUNDS\`, \`DURATION\`, \`COUNT\` in the environment;"
  echo "\`DELIVERY=0\` leaves Postfix out)."
  echo
  echo "### Durable \`POST /v1/emails\`: PostgreSQL vs SQLite vs nginx"
  echo
  echo "| round | nginx req/s | p50 | p99 | noise | SQLite sends/s | p50 | p99 | CPU | noise | PostgreSQL sends/s | p50 | p99 | CPU posthorn + PG | noise | **PG / SQLite** | PG / nginx | SQLite / nginx |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for ((r = 1; r <= ROUNDS; r++)); do
    read -r nr n50 n99 _ _ _ _ _ nst not <<<"${r1[nginx,$r]}"
    read -r sr s50 s99 _ _ _ sco _ sst sot <<<"${r1[sqlite,$r]}"
    read -r pr p50 p99 _ _ _ pco pct pst pot <<<"${r1[pg,$r]}"
    echo "| $r | $(int "$nr") | $(ms "$n50") | $(ms "$n99") | $nst% / $not% |" \
      "$(int "$sr") | $(ms "$s50") | $(ms "$s99") | $(ms "$sco") | $sst% / $sot% |" \
      "$(int "$pr") | $(ms "$p50") | $(ms "$p99") | $(ms "$pco") + $(ms "$pct") | $pst% / $pot% |" \
      "**$(ratio "$pr" "$sr")** | $(ratio "$pr" "$nr") | $(ratio "$sr" "$nr") |"
  done
  echo "| **median** | **$(int "$n_rps")** | $(ms "$(med1 nginx 2)") | $(ms "$(med1 nginx 3)") | |" \
    "**$(int "$s_rps")** | $(ms "$(med1 sqlite 2)") | $(ms "$(med1 sqlite 3)") | $(ms "$(med1 sqlite 7)") | |" \
    "**$(int "$p_rps")** | $(ms "$(med1 pg 2)") | $(ms "$(med1 pg 3)") | $(ms "$(med1 pg 7)") + $(ms "$(med1 pg 8)") | |" \
    "**$(ratio "$p_rps" "$s_rps")** | **$(ratio "$p_rps" "$n_rps")** | **$(ratio "$s_rps" "$n_rps")** |"
  echo
  echo "Goal (issue 26): durable sends on PostgreSQL at least half of SQLite's rate: $goal_sends"
  echo "($(ratio "$p_rps" "$s_rps")× SQLite; PostgreSQL $(ratio "$p_rps" "$n_rps")× nginx's POST rate, SQLite $(ratio "$s_rps" "$n_rps")×)."
  echo
  echo "Stored, counted after each posthorn stopped (SIGTERM): SQLite (sqlite3) $ck_sqlite"
  echo
  echo "PostgreSQL (psql) $ck_pg"
  echo
  echo "### One node vs two nodes on one PostgreSQL database"
  echo
  echo "Two posthorns, each with its own data dir, ports and \`POSTHORN_SERVER_NODE_ID\` (bench-node-1, bench-node-2),"
  echo "on one fresh database and one master key file (\`POSTHORN_SERVER_MASTER_KEY_FILE\`); the account, the key and"
  echo "the verified domain were made through node 1 (a send through node 2 answered 200 before any load). One node:"
  echo "\`wrk -t$THREADS -c$CONNECTIONS\` against node 1 (node 2 running, idle). Two nodes: two wrk at once,"
  echo "\`-t$half_t -c$half_c\` each, one per node: the same $CONNECTIONS connections in all. Rate = the sum of both wrk's;"
  echo "p50/p99 = the worse node's; CPU = both posthorns + PostgreSQL per send; $ROUNDS rounds, alternating."
  echo
  echo "| round | 1 node sends/s | p50 | p99 | CPU | noise | 2 nodes: node 1 sends/s | node 2 sends/s | **sum** | p50 | p99 | CPU | noise | **2 nodes / 1** |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for ((r = 1; r <= ROUNDS; r++)); do
    read -r or o50 o99 _ _ _ oco oct ost oot <<<"${r2[one,$r]}"
    read -r tr t50 t99 _ _ _ tco tct tst tot <<<"${r2[two,$r]}"
    read -r ar _ <<<"${r2a[$r]}"
    read -r br _ <<<"${r2b[$r]}"
    echo "| $r | $(int "$or") | $(ms "$o50") | $(ms "$o99") | $(ms "$(calc "$oco + $oct")") | $ost% / $oot% |" \
      "$(int "$ar") | $(int "$br") | **$(int "$tr")** | $(ms "$t50") | $(ms "$t99") | $(ms "$(calc "$tco + $tct")") | $tst% / $tot% | **$(ratio "$tr" "$or")** |"
  done
  echo "| **median** | **$(int "$one_rps")** | $(ms "$(med2 one 2)") | $(ms "$(med2 one 3)") | $(ms "$(calc "$(med2 one 7) + $(med2 one 8)")") | |" \
    "| | **$(int "$two_rps")** | $(ms "$(med2 two 2)") | $(ms "$(med2 two 3)") | $(ms "$(calc "$(med2 two 7) + $(med2 two 8)")") | | **$(ratio "$two_rps" "$one_rps")** |"
  echo
  echo "What this can show on $nproc_n CPUs: that two nodes on one database work together under load (every"
  echo "send of either node answered and stored once, the same key and domain seen by both, the delivery claims"
  echo "shared out through the database) and what running two processes instead of one costs (a second HTTP"
  echo "server, a second writer connection and its commits, more PostgreSQL backends competing for the same"
  echo "rows and locks). What it cannot show: scale-out. Both nodes, PostgreSQL and wrk share the same $nproc_n CPUs,"
  echo "so a second node adds no CPU to spend; a sum below one node's rate is the price of coordination and of"
  echo "more processes on the same cores, and a sum at or above it says only that this overhead is small, not"
  echo "what a second machine would add. Scale-out needs the nodes, the database and the load on machines of their own."
  echo
  echo "Recipients by lease owner after the runs (each node's delivery engine claims a batch and waits at the"
  echo "holding relay; $held_nodes sessions waiting): ${lease_owners:-none}."
  echo "Stored, counted with psql after both nodes stopped (SIGTERM): $ck_nodes"
  echo
  echo "### Delivery end to end: PostgreSQL vs Postfix"
  echo
  if ((DELIVERY)); then
    echo "\`bench/delivery.sh\` run by this script with \`STORE=pg\` on the same PostgreSQL server (a fresh database),"
    echo "\`MESSAGES=$COUNT ROUNDS=$ROUNDS SIZES=$TEXT_BYTES\` (how it measures: the delivery section's method, above); its tables follow. Goal (issue 26): delivery end to end on"
    echo "PostgreSQL at least 2× Postfix's rate: ${d_line:-not measured}."
    echo
    if [[ -s $tmp/delivery.md ]]; then
      # Its tables and findings; its method is the delivery section's, not repeated here.
      awk '/^\| size \| round/ { on = 1 } on' "$tmp/delivery.md"
    else
      echo "(bench/delivery.sh wrote no section: exit status $delivery_rc.)"
    fi
  else
    echo "Not measured in this run (\`DELIVERY=0\`)."
  fi
  echo
  if [[ ${#noisy[@]} -gt 0 ]]; then
    echo "Disturbed runs (steal or other processes above $NOISY_PCT% of the machine; their figures understate"
    echo "what the machine can do): $(printf '%s; ' "${noisy[@]}" | sed 's/; $//')."
    echo
  fi
  if [[ ${#problems[@]} -gt 0 ]]; then
    echo "**Problems observed in this run (sends and nodes):**"
    echo
    for p in "${problems[@]}"; do echo "- $p"; done
  else
    echo "No problems observed in the sends and the nodes: no non-2xx responses, no socket errors, no warnings in"
    echo "the server logs, every 200 a stored email."
  fi
} >"$section"

echo
cat "$section"
echo

[[ -z $RESULTS ]] || write_results_section pg "$section"

if [[ ${#problems[@]} -gt 0 ]]; then
  say "posthorn misbehaved during the benchmark:"
  for p in "${problems[@]}"; do say "  - $p"; done
  for n in "${!logs[@]}"; do
    if grep -qE ' (warning|error|critical) ' "${logs[$n]}"; then
      say "server log of '$n' (warnings and errors, first 20):"
      grep -E ' (warning|error|critical) ' "${logs[$n]}" | head -n 20 >&2 || true
    fi
  done
  exit 1
fi
