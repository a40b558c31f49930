#!/usr/bin/env bash
# Benchmark: `POST /v1/emails` on posthorn (a 1 KB text email, answered 200 only once it is
# durable), next to the fsync rate of the same disk and nginx answering a 1 KB POST with
# 204, all measured in the same run on loopback.
#
# posthorn answers a send only after the group commit that holds it has reached the disk
# (SQLite, WAL, synchronous=FULL): one fsync per commit, many sends per commit. The fsync
# rate of the disk is therefore what posthorn would reach with one commit per send, and
# sends per second well above it show the group commit at work.
#
# What one run does:
#   1. starts nginx with a private configuration in a temporary prefix (never the system
#      one), dnsmasq (a real DNS server) and posthorn on a fresh temporary data dir, each
#      on a free port of 127.0.0.1; posthorn gets one account, one API key and the domain
#      mail.example.com, whose records (DKIM CNAMEs and the TXT they point to, SPF, DMARC,
#      MX) are published in dnsmasq so that `POST /v1/domains/mail.example.com/verify`
#      answers VERIFIED: only a verified domain may send;
#   2. writes once to the machine's free memory (touch_free_memory in bench/lib.sh: on a
#      fresh VM a page's first write costs a fault in the host), warms up, then, for
#      $ROUNDS rounds, measures in rotating order: the fsync rate of the disk of the data
#      dir (1 KB appended + fdatasync, in a loop, for $FSYNC_SECONDS s with one thread, then
#      with $FSYNC_THREADS threads), nginx and posthorn, each with
#      `wrk --latency -t$THREADS -c$CONNECTIONS -d${DURATION}s` and the same POST request;
#      after each posthorn run, a run of $COUNT_SECONDS s more at the same load during which
#      `perf stat`, where it can, counts the fsync/fdatasync calls posthorn makes (not
#      during the measured run: the syscall tracepoints cost posthorn ~3% of its rate);
#   3. runs posthorn $ROUNDS more times at about $PACED_FRACTION of its median maximum (wrk
#      has no -R here: a LuaJIT script paces requests with wrk's delay() hook) and reports
#      each run and their medians; if pacing is not possible, a light-load run with
#      -c$LIGHT_CONNECTIONS instead;
#   4. stops posthorn (SIGTERM: it finishes the requests in flight and flushes the store)
#      and counts the rows of `emails` with sqlite3 against the 200s wrk saw: every 200
#      must be a stored email;
#   5. prints a markdown section and replaces the send_emails section of $RESULTS.
#
# Options (environment): ROUNDS=3 DURATION=10 WARMUP=3 THREADS=2 CONNECTIONS=64
#   LIGHT_CONNECTIONS=8 PACED_FRACTION=0.5 FSYNC_SECONDS=5 FSYNC_THREADS=4 COUNT_SECONDS=4
#   TEXT_BYTES=1024 (the email's text) PH_BIN=build/posthorn
#   NOISY_PCT=10 (flag runs where steal or other processes took more of the machine)
#   RESULTS=bench/RESULTS.md (empty: do not write it) KEEP_TMP=1 (keep the temp dir).
# posthorn runs with limits.send_rate_per_minute = 100000000 (the default, 1000 a minute,
# would answer most sends 429). What is measured is acceptance alone, as Postfix's
# acceptance-only figure in PEERS.md: the delivery engine runs, but its relay
# (delivery.relay) is a listener on loopback that takes connections and never answers, so
# the engine claims its first batch, opens its sessions, and waits for a greeting until the
# run is over (delivery.command_timeout_s = 3600) instead of signing and sending the emails
# while they are being accepted. Inherited POSTHORN_* variables are ignored so that a run
# does not depend on them.
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
FSYNC_SECONDS=${FSYNC_SECONDS:-5}
FSYNC_THREADS=${FSYNC_THREADS:-4}
COUNT_SECONDS=${COUNT_SECONDS:-4}
TEXT_BYTES=${TEXT_BYTES:-1024}
PH_BIN=${PH_BIN:-build/posthorn}
RESULTS=${RESULTS-bench/RESULTS.md}
SEND_RATE=100000000 # limits.send_rate_per_minute: its maximum, so that nothing is throttled
DOMAIN=mail.example.com
FROM="Bench <bench@$DOMAIN>"
TO=user@example.net
DKIM_ZONE=dkim.posthorn.test
SPF_INCLUDE=spf.posthorn.test
INBOUND_MX=mx.posthorn.test

say() { printf '[send_emails] %s\n' "$*" >&2; }
for v in ROUNDS DURATION WARMUP THREADS CONNECTIONS LIGHT_CONNECTIONS FSYNC_SECONDS FSYNC_THREADS COUNT_SECONDS TEXT_BYTES; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')" 2
done
[[ $PACED_FRACTION =~ ^0?\.[0-9]+$ ]] || die "PACED_FRACTION must be in (0,1) (got '$PACED_FRACTION')" 2

missing=()
for tool in wrk nginx sqlite3 curl timeout awk sort pgrep; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
# dnsmasq is in /usr/sbin, which is not on every PATH; the system python3 rather than a
# pyenv shim (which would start slowly and measure another interpreter).
DNSMASQ=$(command -v dnsmasq 2>/dev/null || echo /usr/sbin/dnsmasq)
[[ -x $DNSMASQ ]] || missing+=(dnsmasq)
PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3 2>/dev/null || echo)
[[ -n $PY ]] || missing+=(python3)
if [[ ${#missing[@]} -gt 0 ]]; then
  die "missing tools: ${missing[*]} — install them with scripts/install-deps.sh --bench (wrk, nginx-light; sqlite3, curl, python3, dnsmasq-base from the base set)" 2
fi
[[ -x $PH_BIN ]] || die "no posthorn binary at $PH_BIN — build it first (make build), or set PH_BIN" 2

while read -r name; do unset "$name"; done < <(compgen -e | grep '^POSTHORN_' || true)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/posthorn-bench.XXXXXX")
nginx_pid=
ph_pid=
ph_exit=
dns_pid=
hold_pid=
bg_pid=
perf_pid=

# ---- process control ---------------------------------------------------------------

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n $bg_pid ]]; then kill -TERM "$bg_pid" 2>/dev/null || true; fi
  if [[ -n $perf_pid ]]; then kill -INT "$perf_pid" 2>/dev/null || true; fi
  stop_posthorn
  stop_nginx
  stop_dnsmasq
  stop_hold
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

# The fsync and fdatasync calls posthorn makes during a run, counted by `perf stat` on the
# syscall tracepoints, when perf can do that here; else they are not counted. Not free: with
# a syscall tracepoint enabled every system call of the server takes the kernel's slow path,
# which cost posthorn 2-5% of its full-load rate (3 pairs of 8 s runs, alternating, in the
# thirteenth session); so the full-load runs that are measured go uncounted, and a run of
# their own counts (count_syncs).
perf_ok=0
if command -v perf >/dev/null 2>&1 &&
  perf stat -x, -o /dev/null -e syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync -- true >/dev/null 2>&1; then
  perf_ok=1
fi
perf_start() { # OUT PID
  ((perf_ok)) || return 0
  perf stat -x, -o "$1" -e syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync -p "$2" >/dev/null 2>&1 &
  perf_pid=$!
  sleep 0.2 # attached to every thread before the load starts
}
# Sets PF to the number of syscalls counted, or "" (not counted).
perf_stop() { # OUT
  PF=
  [[ -n $perf_pid ]] || return 0
  kill -INT "$perf_pid" 2>/dev/null || true
  wait "$perf_pid" 2>/dev/null || true
  perf_pid=
  PF=$(awk -F, '$3 ~ /^syscalls:sys_enter_f(data)?sync$/ && $1 ~ /^[0-9]+$/ { n += $1; ok = 1 }
    END { if (ok) print n }' "$1" 2>/dev/null || true)
}

# run_wrk TARGET LABEL SECONDS WRK_ARGS...: one wrk run against nginx or posthorn; sets W to
# "req_per_s p50 p99 requests non_2xx socket_errors cpu_ms_per_request steal_pct other_pct"
# where other_pct is the CPU time used by processes other than the server and wrk, in % of
# the machine, and (posthorn, when count_syncs is 1) PF to the fsync + fdatasync calls it
# made meanwhile ("" if not counted).
# Returns 1 (after printing wrk's output) when wrk fails or its output cannot be read;
# exits at once when posthorn died during the run.
W=
PF=
count_syncs=1
run_wrk() {
  local target=$1 label=$2 secs=$3 out pids m0 m1 c0 c1 w0 w1 parsed reqs tck cpu noise
  shift 3
  W=
  PF=
  out="$tmp/wrk-$label.txt"
  if [[ $target == nginx ]]; then
    # shellcheck disable=SC2207 # pids are words without spaces
    pids=("$nginx_pid" $(pgrep -P "$nginx_pid" || true))
  else
    pids=("$ph_pid")
    if ((count_syncs)); then perf_start "$tmp/perf-$label.txt" "$ph_pid"; fi
  fi
  m0=$(machine_ticks)
  c0=$(cpu_ticks "${pids[@]}")
  w0=$(child_ticks)
  if ! bounded $((secs + 30)) "$out" "$out" wrk --latency -d"${secs}s" "$@"; then
    cat "$out" >&2
    say "wrk failed ($label)"
    perf_stop "$tmp/perf-$label.txt"
    return 1
  fi
  c1=$(cpu_ticks "${pids[@]}")
  w1=$(child_ticks)
  m1=$(machine_ticks)
  if [[ $target == posthorn ]]; then perf_stop "$tmp/perf-$label.txt"; fi
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
  noise=$(noise_between "$m0" "$m1" $((c1 - c0 + w1 - w0)))
  W="$parsed $cpu $noise"
}

# The fsync tool: appends 1 KB to a file of its own per thread, in the directory given,
# and calls fdatasync after each append, for the given number of seconds; prints
# "fsyncs_per_second fsyncs seconds".
cat >"$tmp/fsync_rate.py" <<'PY'
import os, sys, threading, time

directory, seconds, nthreads = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
block = b"x" * 1023 + b"\n"
counts = [0] * nthreads
start = threading.Barrier(nthreads + 1)
t0 = t1 = 0.0

def work(i):
    path = os.path.join(directory, f"fsync-{i}.dat")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o600)
    try:
        os.write(fd, block)
        os.fsync(fd)  # the file exists on disk before the clock starts
        start.wait()
        n = 0
        deadline = t0 + seconds
        while time.monotonic() < deadline:
            os.write(fd, block)
            os.fdatasync(fd)  # releases the GIL: the threads sync concurrently
            n += 1
        counts[i] = n
    finally:
        os.close(fd)
        os.unlink(path)

threads = [threading.Thread(target=work, args=(i,)) for i in range(nthreads)]
for t in threads:
    t.start()
t0 = time.monotonic()
start.wait()
for t in threads:
    t.join()
t1 = time.monotonic()
total = sum(counts)
print(f"{total / (t1 - t0):.1f} {total} {t1 - t0:.3f}")
PY

# run_fsync LABEL THREADS SECONDS: sets F to "fsyncs_per_second steal_pct other_pct".
F=
run_fsync() {
  local label=$1 n=$2 secs=$3 out m0 m1 w0 w1 rate
  out="$tmp/fsync-$label.txt"
  F=
  mkdir -p "$tmp/fsync"
  m0=$(machine_ticks)
  w0=$(child_ticks)
  if ! bounded $((secs + 30)) "$out" "$out" "$PY" "$tmp/fsync_rate.py" "$tmp/fsync" "$secs" "$n"; then
    cat "$out" >&2
    say "the fsync tool failed ($label)"
    return 1
  fi
  w1=$(child_ticks)
  m1=$(machine_ticks)
  rate=$(awk 'NF == 3 && $1 > 0 { print $1 }' "$out" | tail -n1)
  if [[ -z $rate ]]; then
    cat "$out" >&2
    say "cannot read the fsync tool's output ($label)"
    return 1
  fi
  # The servers idle meanwhile: what they use counts as other processes.
  F="$rate $(noise_between "$m0" "$m1" $((w1 - w0)))"
}

emails_rows() { sqlite3 "$db" '.timeout 10000' 'SELECT COUNT(*) FROM emails;'; }

# ---- the request -------------------------------------------------------------------

# One send: a ~1 KB plain-text body (TEXT_BYTES of text, lines of at most 72 characters).
write_send_body "$tmp/body.json" "$TEXT_BYTES" "posthorn benchmark: a 1 KB text email"
body_bytes=$(stat -c %s "$tmp/body.json")
# wrk: every request of a run is this POST (the same bytes to nginx and to posthorn).
write_post_lua "$tmp/body.json" "$tmp/post.lua"
# Moderate load: wrk's delay() hook, with a wall clock from LuaJIT's ffi, hands out
# request slots at a fixed rate per wrk thread (a slot missed is skipped, not made up).
{
  cat "$tmp/post.lua"
  cat <<'LUA'
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
} >"$tmp/pace.lua"

# ---- start the servers -------------------------------------------------------------

nproc_n=$(nproc)
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
[[ -n $cpu_model ]] || cpu_model=unknown
# shellcheck disable=SC1091
os_name=$( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || echo unknown)
wrk_version=$( (wrk -v 2>&1 || true) | awk 'NR == 1 { print $2 }')
py_version=$("$PY" -c 'import platform; print(platform.python_version())')
ph_commit=$(binary_commit)
# A copy, so that a rebuild during the run cannot change the binary under the benchmark.
cp "$PH_BIN" "$tmp/posthorn"
ph_sha=$(sha256sum "$tmp/posthorn" | cut -c1-12)
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
disk=$(df -P "$tmp" | awk 'NR == 2 { print $1 }')
fs_type=$( (findmnt -n -o FSTYPE -T "$tmp" 2>/dev/null || stat -f -c %T "$tmp") | head -n1)
mount_opts=$( (findmnt -n -o OPTIONS -T "$tmp" 2>/dev/null || echo unknown) | head -n1)
case $fs_type in
  tmpfs | ramfs) say "warning: $tmp is on $fs_type: fsync does nothing there, set TMPDIR to a directory on a disk" ;;
esac

start_nginx_post "$tmp/body.json"

# dnsmasq answers only for the names it is authoritative for (--local); the records of the
# domain are added once posthorn has made them, by a restart on the same port.
start_posthorn_with_verified_domain

# One send with curl: it must answer 200 with an id, and the email must be readable.
code=$(api POST /v1/emails "$tmp/send.json" "$(cat "$tmp/body.json")")
first_id=$(jfield "$tmp/send.json" id)
[[ $code == 200 && $first_id == em_* ]] || die "POST /v1/emails answered $code: $(head -c 500 "$tmp/send.json")"
code=$(api GET "/v1/emails/$first_id" "$tmp/first.json")
[[ $code == 200 && $(jfield "$tmp/first.json" id) == "$first_id" ]] ||
  die "GET /v1/emails/$first_id answered $code: $(head -c 500 "$tmp/first.json")"
first_status=$(jfield "$tmp/first.json" status)
[[ $first_status == QUEUED ]] ||
  die "the first email is $first_status, not QUEUED: is the delivery relay not holding the delivery engine? $(head -c 500 "$tmp/first.json")"
raw_bytes=$(sqlite3 "$db" '.timeout 10000' "SELECT length(b.raw) FROM emails e JOIN email_bodies b ON b.id = e.body_id WHERE e.id = '$first_id';")
# Sends made outside wrk, each a stored email.
extra_sends=1

# ---- measure -----------------------------------------------------------------------

wrk_nginx=(-t"$THREADS" -c"$CONNECTIONS" -s "$tmp/post.lua" -H "$auth" "$nginx_url")
wrk_ph=(-t"$THREADS" -c"$CONNECTIONS" -s "$tmp/post.lua" -H "$auth" "$ph_url")

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
account_nginx() { # non2xx sockerr
  nginx_non2xx=$((nginx_non2xx + $1))
  nginx_sockerr=$((nginx_sockerr + $2))
}

touch_free_memory
say "warm-up: ${WARMUP}s each"
run_fsync warmup 1 1 || die "the fsync warm-up failed"
run_wrk nginx warmup-nginx "$WARMUP" "${wrk_nginx[@]}" || die "the nginx warm-up failed"
read -r _ _ _ _ n2 se _ _ _ <<<"$W"
account_nginx "$n2" "$se"
run_wrk posthorn warmup-posthorn "$WARMUP" "${wrk_ph[@]}" || die "the posthorn warm-up failed"
read -r _ _ _ rq n2 se _ _ _ <<<"$W"
account_posthorn "$rq" "$n2" "$se" "$CONNECTIONS"

# fsyncs_text REQUESTS SECONDS: "fsync calls/s | sends per fsync" of posthorn from PF.
fsyncs_text() {
  if [[ -n $PF ]] && ((PF > 0)); then
    echo "$(fmt '%.0f' "$(calc "$PF / $2")") | $(fmt '%.1f' "$(calc "$1 / $PF")")"
  else
    echo "? | ?"
  fi
}

declare -a p_fsync f1 fn f_st n_rps n_p50 n_p99 n_cpu n_st p_rps p_p50 p_p99 p_cpu p_st p_rows p_fs p_spf
kinds=(fsync nginx posthorn)
for ((r = 1; r <= ROUNDS; r++)); do
  # Each measurement takes each place in turn: fsync nginx posthorn, nginx posthorn fsync...
  order=()
  for ((i = 0; i < 3; i++)); do order+=("${kinds[(i + r - 1) % 3]}"); done
  for target in "${order[@]}"; do
    case $target in
      fsync)
        say "round $r/$ROUNDS: fsync (${FSYNC_SECONDS}s with 1 thread, ${FSYNC_SECONDS}s with $FSYNC_THREADS)"
        run_fsync "r$r-1" 1 "$FSYNC_SECONDS" || die "round $r: the fsync run failed"
        read -r rate st ot <<<"$F"
        f1[r]=$rate
        note_noise "round $r fsync, 1 thread" "$st" "$ot"
        run_fsync "r$r-$FSYNC_THREADS" "$FSYNC_THREADS" "$FSYNC_SECONDS" || die "round $r: the fsync run failed"
        read -r rate st2 ot2 <<<"$F"
        fn[r]=$rate
        note_noise "round $r fsync, $FSYNC_THREADS threads" "$st2" "$ot2"
        f_st[r]="$st% / $ot%"
        ;;
      nginx)
        say "round $r/$ROUNDS: nginx (${DURATION}s)"
        run_wrk nginx "r$r-nginx" "$DURATION" "${wrk_nginx[@]}" || die "round $r: the nginx run failed"
        read -r rps p50 p99 _ n2 se cpu st ot <<<"$W"
        account_nginx "$n2" "$se"
        note_noise "round $r nginx" "$st" "$ot"
        n_rps[r]=$rps n_p50[r]=$p50 n_p99[r]=$p99 n_cpu[r]=$cpu n_st[r]="$st% / $ot%"
        ;;
      posthorn)
        say "round $r/$ROUNDS: posthorn (${DURATION}s, then ${COUNT_SECONDS}s counting its syncs)"
        p_rows[r]=$(emails_rows)
        count_syncs=0
        run_wrk posthorn "r$r-posthorn" "$DURATION" "${wrk_ph[@]}" || die "round $r: the posthorn run failed"
        count_syncs=1
        read -r rps p50 p99 rq n2 se cpu st ot <<<"$W"
        account_posthorn "$rq" "$n2" "$se" "$CONNECTIONS"
        note_noise "round $r posthorn" "$st" "$ot"
        p_rps[r]=$rps p_p50[r]=$p50 p_p99[r]=$p99 p_cpu[r]=$cpu p_st[r]="$st% / $ot%"
        run_wrk posthorn "r$r-posthorn-count" "$COUNT_SECONDS" "${wrk_ph[@]}" ||
          die "round $r: the posthorn run counting syncs failed"
        read -r _ _ _ rq n2 se _ _ _ <<<"$W"
        account_posthorn "$rq" "$n2" "$se" "$CONNECTIONS"
        p_fsync[r]=$(fsyncs_text "$rq" "$COUNT_SECONDS")
        [[ -z $PF ]] || ((PF == 0)) || { p_fs[r]=$(calc "$PF / $COUNT_SECONDS"); p_spf[r]=$(calc "$rq / $PF"); }
        ;;
    esac
  done
done

med_f1=$(median "${f1[@]}")
med_fn=$(median "${fn[@]}")
med_n_rps=$(median "${n_rps[@]}")
med_n_p50=$(median "${n_p50[@]}")
med_n_p99=$(median "${n_p99[@]}")
med_n_cpu=$(median "${n_cpu[@]}")
med_p_rps=$(median "${p_rps[@]}")
med_p_p50=$(median "${p_p50[@]}")
med_p_p99=$(median "${p_p99[@]}")
med_p_cpu=$(median "${p_cpu[@]}")
med_fsync="? | ?"
med_syncs=
med_spf=
if [[ ${#p_fs[@]} -eq $ROUNDS ]]; then
  med_syncs=$(median "${p_fs[@]}")
  med_spf=$(median "${p_spf[@]}")
  med_fsync="$(fmt '%.0f' "$med_syncs") | $(fmt '%.1f' "$med_spf")"
fi

target_rps=$(fmt '%.0f' "$(calc "$med_p_rps * $PACED_FRACTION")")
per_thread=$(calc "$target_rps / $THREADS")
mod_kind=paced
mod_cmd="wrk --latency -t$THREADS -c$CONNECTIONS -d${DURATION}s -s pace.lua -H \"Authorization: Bearer \$KEY\" http://127.0.0.1:\$PORT/v1/emails $(fmt '%.1f' "$per_thread")"
# One paced run per round (a single run of a few seconds is at the mercy of one stall of this
# noisy machine): the report gives each run's figures and the goal is judged on their medians.
say "moderate load: paced to ~$target_rps req/s (${DURATION}s, $ROUNDS runs)"
m_rows=$(emails_rows)
paced_ok=0
declare -a pm_rps pm_p50 pm_p99 pm_cpu pm_fsync pm_noise
for ((r = 1; r <= ROUNDS; r++)); do
  run_wrk posthorn "moderate-$r" "$DURATION" -t"$THREADS" -c"$CONNECTIONS" -s "$tmp/pace.lua" -H "$auth" \
    "$ph_url" "$per_thread" || die "the paced run failed"
  read -r m_rps m_p50 m_p99 rq n2 se m_cpu m_st m_ot <<<"$W"
  account_posthorn "$rq" "$n2" "$se" "$CONNECTIONS"
  # wrk reports a script error on stderr and runs on without the script.
  if grep -qF "$tmp/pace.lua:" "$tmp/wrk-moderate-$r.txt"; then
    say "wrk could not run the pacing script:"
    grep -F "$tmp/pace.lua:" "$tmp/wrk-moderate-$r.txt" | head -n 3 >&2
    paced_ok=0
    break
  elif awk -v a="$m_rps" -v t="$target_rps" 'BEGIN { exit !(a > 1.25 * t) }'; then
    say "the pacing did not hold: $m_rps req/s for a target of $target_rps"
    paced_ok=0
    break
  fi
  paced_ok=1
  note_noise "paced load, run $r" "$m_st" "$m_ot"
  pm_rps+=("$m_rps")
  pm_p50+=("$m_p50")
  pm_p99+=("$m_p99")
  pm_cpu+=("$m_cpu")
  pm_fsync+=("$(fsyncs_text "$rq" "$DURATION")")
  pm_noise+=("$m_st% / $m_ot%")
done
if ((paced_ok)); then
  m_rps=$(median "${pm_rps[@]}")
  m_p50=$(median "${pm_p50[@]}")
  m_p99=$(median "${pm_p99[@]}")
  m_cpu=$(median "${pm_cpu[@]}")
fi
if ((!paced_ok)); then
  say "measuring light load (-c$LIGHT_CONNECTIONS) instead of paced load"
  mod_kind=light
  mod_cmd="wrk --latency -t$THREADS -c$LIGHT_CONNECTIONS -d${DURATION}s -s post.lua -H \"Authorization: Bearer \$KEY\" http://127.0.0.1:\$PORT/v1/emails"
  m_rows=$(emails_rows)
  run_wrk posthorn light "$DURATION" -t"$THREADS" -c"$LIGHT_CONNECTIONS" -s "$tmp/post.lua" -H "$auth" "$ph_url" ||
    die "the light-load run failed"
  read -r m_rps m_p50 m_p99 rq n2 se m_cpu m_st m_ot <<<"$W"
  account_posthorn "$rq" "$n2" "$se" "$LIGHT_CONNECTIONS"
  m_fsync=$(fsyncs_text "$rq" "$DURATION")
  note_noise "light load" "$m_st" "$m_ot"
fi

# ---- the stored emails -------------------------------------------------------------

sleep 1 # let the last group commit land
rows_live=$(emails_rows)
code=$(api GET '/v1/email?limit=1' "$tmp/list.json")
api_total=$(jfield "$tmp/list.json" total)
[[ $code == 200 ]] || api_total=
wal_bytes=$(stat -c %s "$db-wal" 2>/dev/null || echo 0)
db_bytes=$(stat -c %s "$db" 2>/dev/null || echo 0)
held=$(held_sessions)

say "stopping posthorn (SIGTERM)"
stop_posthorn
rows=$(emails_rows)
read -r n_env n_rcpt n_bodies < <(sqlite3 -separator ' ' "$db" '.timeout 10000' \
  "SELECT (SELECT COUNT(envelope_id) FROM emails), (SELECT COUNT(*) FROM recipients), (SELECT COUNT(*) FROM email_bodies);")
email_status=$(sqlite3 "$db" '.timeout 10000' \
  "SELECT status || ': ' || COUNT(*) FROM emails GROUP BY status ORDER BY status;" | paste -sd, - | sed 's/,/, /g')
# The request log (flushed at the shutdown) has the status of every answer.
log_status=$(sqlite3 "$db" '.timeout 10000' \
  "SELECT status || ': ' || COUNT(*) FROM request_logs WHERE method = 'POST' AND url = '/v1/emails' GROUP BY status ORDER BY status;" | paste -sd, - | sed 's/,/, /g')
log_200=$(sqlite3 "$db" '.timeout 10000' \
  "SELECT COUNT(*) FROM request_logs WHERE method = 'POST' AND url = '/v1/emails' AND status = 200;")
server_problems=$(grep -Ec ' (warning|error|critical) ' "$tmp/posthorn.log" || true)
stop_nginx
stop_dnsmasq
stop_hold

answered_200=$((ph_requests - ph_non2xx + extra_sends))
# wrk counts the responses it read; the requests in flight when a run ends are answered
# (and stored) by the server but not counted by wrk: at most one per connection and run.
max_rows=$((answered_200 + ph_connections))

problems=()
[[ $ph_exit == 0 ]] || problems+=("posthorn exited with status $ph_exit after SIGTERM")
((ph_non2xx == 0)) || problems+=("wrk saw $ph_non2xx non-2xx/3xx responses from posthorn (statuses in the request log: $log_status)")
((ph_sockerr == 0)) || problems+=("wrk saw $ph_sockerr socket errors (connect/read/write/timeout) against posthorn")
((nginx_non2xx == 0 && nginx_sockerr == 0)) ||
  problems+=("nginx: $nginx_non2xx non-2xx/3xx responses, $nginx_sockerr socket errors")
((rows >= answered_200)) || problems+=("emails lost: $rows rows in emails for $answered_200 sends answered 200")
((rows <= max_rows)) || problems+=("emails has $rows rows, more than the $max_rows sends that can have been answered 200")
((rows == rows_live)) || problems+=("emails held $rows_live rows before the shutdown and $rows after it: an answered send was not committed when it was answered")
((n_env == rows && n_rcpt == rows && n_bodies == rows)) ||
  problems+=("$rows emails but $n_env envelopes, $n_rcpt recipients, $n_bodies bodies (one each expected)")
((log_200 == rows)) || problems+=("the request log has $log_200 POST /v1/emails answered 200 for $rows emails")
((server_problems == 0)) || problems+=("posthorn logged $server_problems warning/error lines")
if [[ -z $api_total ]]; then
  problems+=("GET /v1/email?limit=1 after the runs did not answer a total: $(head -c 200 "$tmp/list.json")")
elif ((api_total != rows_live)); then
  problems+=("GET /v1/email?limit=1 after the runs answered total = $api_total while the table held $rows_live rows")
fi

# ---- report ------------------------------------------------------------------------

ratio() { fmt '%.3g' "$(calc "$1 / $2")"; } # 3 significant digits
thousands() { printf "%'d" "$1" 2>/dev/null || echo "$1"; }
yes_no() { if awk "BEGIN { exit !($1) }"; then echo "**met**"; else echo "**not met**"; fi; }

goal_fsync=$(yes_no "$med_p_rps > 2 * $med_f1")
goal_nginx=$(yes_no "$med_p_rps >= 0.2 * $med_n_rps")
goal_p99=$(yes_no "$m_p99 < 5")

section="$tmp/section.md"
{
  echo "## HTTP: durable \`POST /v1/emails\` (1 KB text) vs the disk's fsync rate and nginx POST 204"
  echo
  echo "Generated by \`bench/send_emails.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC')."
  echo
  echo "- Machine: $nproc_n CPUs, $cpu_model; $os_name, kernel $(uname -r); load average $load_at_start at the start."
  echo "- Disk: the data dir and the fsync tool's files on $disk ($fs_type, $mount_opts)."
  memory_line
  echo "- Software: posthorn $ph_commit (\`$PH_BIN\`, sha256 $ph_sha…), nginx $nginx_version, wrk $wrk_version,"
  echo "  dnsmasq $dns_version, Python $py_version (the fsync tool)."
  echo "- Request: \`POST\` with \`Content-Type: application/json\` and a $body_bytes-byte body,"
  echo "  \`{\"from\":\"$FROM\",\"to\":\"$TO\",\"subject\":…,\"text\":…}\` with $TEXT_BYTES bytes of text"
  echo "  (the stored message: $raw_bytes bytes); the same bytes, \`Authorization\` header included, to nginx."
  echo "- Load: \`wrk --latency -t$THREADS -c$CONNECTIONS -d${DURATION}s -s post.lua\` on 127.0.0.1, client and servers on the same $nproc_n CPUs;"
  echo "  $ROUNDS rounds of fsync, nginx and posthorn in rotating order, after warm-ups (${WARMUP}s of wrk each)."
  echo "- fsync: a Python loop appends 1 KB to a file of its own and calls \`os.fdatasync\`, for ${FSYNC_SECONDS}s,"
  echo "  with 1 thread, then with $FSYNC_THREADS threads (a file each), in the same directory as the data dir."
  echo "- nginx: private config, \`worker_processes 2\`, \`access_log off\`, \`location = /post { return 204; }\`"
  echo "  (the body is read and discarded), keep-alive unlimited."
  echo "- posthorn: fresh data dir (SQLite, WAL, synchronous=FULL), one account and key, the domain"
  echo "  $DOMAIN verified against dnsmasq (its DKIM CNAMEs, SPF, DMARC and MX published there);"
  echo "  \`POSTHORN_LIMITS_SEND_RATE_PER_MINUTE=$SEND_RATE\`: the default send rate, 1000 a minute,"
  echo "  would answer most of these sends 429. Each 200 comes after the group commit holding the"
  echo "  email (the email, its envelope, recipient and MIME body) has been fsynced; the request"
  echo "  log entry of each send is written too."
  echo "- Acceptance alone (as Postfix's acceptance-only figure in PEERS.md): posthorn's delivery engine"
  echo "  runs, but its relay (\`POSTHORN_DELIVERY_RELAY\`) is a loopback listener that never answers,"
  echo "  so the engine claims one batch, opens its sessions and waits for a greeting"
  echo "  (\`POSTHORN_DELIVERY_COMMAND_TIMEOUT_S=3600\`) instead of signing and sending while the"
  echo "  emails are accepted; $held sessions were waiting at the end. Delivery costs CPU of its own"
  echo "  (DKIM signing, SMTP) that these figures leave out."
  echo
  echo "Reproduce: \`make bench\` (installs wrk and nginx-light, builds, runs every benchmark) or,"
  echo "with the binary built, \`ROUNDS=$ROUNDS bench/send_emails.sh\`. The runs it makes:"
  echo
  echo '```'
  echo "python3 fsync_rate.py \$DIR $FSYNC_SECONDS 1; python3 fsync_rate.py \$DIR $FSYNC_SECONDS $FSYNC_THREADS"
  echo "wrk --latency -t$THREADS -c$CONNECTIONS -d${DURATION}s -s post.lua -H \"Authorization: Bearer \$KEY\" http://127.0.0.1:\$NGINX_PORT/post"
  echo "wrk --latency -t$THREADS -c$CONNECTIONS -d${DURATION}s -s post.lua -H \"Authorization: Bearer \$KEY\" http://127.0.0.1:\$PORT/v1/emails"
  echo "$mod_cmd"
  echo '```'
  echo
  echo "fsync/s with 1 thread and $FSYNC_THREADS threads; latencies in ms; CPU = server CPU time (user+system)"
  echo "per request, in ms; noise = the machine's CPU steal / CPU used by other processes than the"
  echo "server (or fsync tool) and wrk, in % of all CPUs, during the run (fsync: the 1-thread run);"
  echo "rows = emails stored when the posthorn run started; syncs/s = the fsync and fdatasync calls"
  echo "posthorn made per second of a ${COUNT_SECONDS}s run at the same load right after the measured one"
  echo "(counted by \`perf stat\` on the syscall tracepoints, which slow posthorn by a few %, hence not"
  echo "during the measured run; ? when perf could not), sends/sync = the sends answered per such call:"
  echo "the group commit at work. At half load the syncs are counted during the runs themselves."
  echo
  echo "| round | fsync/s | fsync/s ×$FSYNC_THREADS | noise | nginx req/s | p50 | p99 | CPU | noise | posthorn sends/s | p50 | p99 | CPU | noise | rows | syncs/s | sends/sync | posthorn/nginx | posthorn/fsync |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for ((r = 1; r <= ROUNDS; r++)); do
    echo "| $r | $(int "${f1[r]}") | $(int "${fn[r]}") | ${f_st[r]} |" \
      "$(int "${n_rps[r]}") | $(ms "${n_p50[r]}") | $(ms "${n_p99[r]}") | $(ms "${n_cpu[r]}") | ${n_st[r]} |" \
      "$(int "${p_rps[r]}") | $(ms "${p_p50[r]}") | $(ms "${p_p99[r]}") | $(ms "${p_cpu[r]}") | ${p_st[r]} | ${p_rows[r]} | ${p_fsync[r]} |" \
      "$(ratio "${p_rps[r]}" "${n_rps[r]}") | $(ratio "${p_rps[r]}" "${f1[r]}") |"
  done
  echo "| **median** | **$(int "$med_f1")** | **$(int "$med_fn")** | |" \
    "**$(int "$med_n_rps")** | **$(ms "$med_n_p50")** | **$(ms "$med_n_p99")** | $(ms "$med_n_cpu") | |" \
    "**$(int "$med_p_rps")** | **$(ms "$med_p_p50")** | **$(ms "$med_p_p99")** | $(ms "$med_p_cpu") | | | $med_fsync |" \
    "**$(ratio "$med_p_rps" "$med_n_rps")** | **$(ratio "$med_p_rps" "$med_f1")** |"
  echo
  echo "Medians: posthorn/nginx req/s $(ratio "$med_p_rps" "$med_n_rps")×, p50 $(ratio "$med_p_p50" "$med_n_p50")×," \
    "p99 $(ratio "$med_p_p99" "$med_n_p99")×, CPU per request $(ratio "$med_p_cpu" "$med_n_cpu")×;"
  echo "durable sends per second / fsyncs per second: $(ratio "$med_p_rps" "$med_f1")× one thread's," \
    "$(ratio "$med_p_rps" "$med_fn")× $FSYNC_THREADS threads'."
  if [[ -n $med_syncs ]]; then
    echo "Group commit: at full load posthorn made $(int "$med_syncs") fsync/fdatasync calls per second, each for" \
      "$(fmt '%.1f' "$med_spf") sends (medians),"
    if awk -v a="$med_syncs" -v b="$med_f1" 'BEGIN { exit !(a < 0.5 * b) }'; then
      echo "$(ratio "$med_syncs" "$med_f1")× the disk's one-thread fsync rate: the disk had room to spare, and the"
      echo "send rate was bound by CPU ($(ms "$med_p_cpu") ms of server CPU per send, $(ratio "$med_p_cpu" "$med_n_cpu")× nginx's per request)."
    else
      echo "$(ratio "$med_syncs" "$med_f1")× the disk's one-thread fsync rate: the send rate was bound by the disk's flushes."
    fi
  fi
  echo
  if [[ ${#noisy[@]} -gt 0 ]]; then
    echo "Disturbed runs (steal or other processes above $NOISY_PCT% of the machine; their figures"
    echo "understate what the machine can do): $(printf '%s; ' "${noisy[@]}" | sed 's/; $//')."
    echo
  fi
  if [[ $mod_kind == paced ]]; then
    echo "Half load (posthorn only, paced to $PACED_FRACTION × the median maximum = $target_rps sends/s by wrk's"
    echo "\`delay()\` hook; closed loop, so not a constant-rate generator like wrk2):"
    echo "medians of $ROUNDS runs of ${DURATION}s: $(int "$m_rps") sends/s achieved ($(fmt '%.0f' "$(calc "100 * $m_rps / $med_p_rps")")% of the median maximum), p50 $(ms "$m_p50") ms,"
    echo "**p99 $(ms "$m_p99") ms**, CPU $(ms "$m_cpu") ms/request; $m_rows rows at start. Each run:"
    echo
    echo "| run | sends/s | p50 | p99 | CPU | noise | syncs/s \| sends/sync |"
    echo "|---|---:|---:|---:|---:|---:|---:|"
    for ((r = 0; r < ${#pm_rps[@]}; r++)); do
      echo "| $((r + 1)) | $(int "${pm_rps[r]}") | $(ms "${pm_p50[r]}") | $(ms "${pm_p99[r]}") | $(ms "${pm_cpu[r]}") | ${pm_noise[r]} | ${pm_fsync[r]} |"
    done
  else
    echo "Light load (posthorn only, -c$LIGHT_CONNECTIONS; pacing to $target_rps sends/s did not work with this wrk):"
    echo "$(int "$m_rps") sends/s ($(fmt '%.0f' "$(calc "100 * $m_rps / $med_p_rps")")% of the median maximum), p50 $(ms "$m_p50") ms, **p99 $(ms "$m_p99") ms**,"
    echo "CPU $(ms "$m_cpu") ms/request, noise $m_st% / $m_ot%; $m_rows rows at start; syncs/s | sends/sync: $m_fsync."
  fi
  echo
  echo "Goals (issue): durable sends/s well above fsyncs/s (taken here as more than 2× one thread's): $goal_fsync"
  echo "($(ratio "$med_p_rps" "$med_f1")×); at least a fifth of nginx's POST rate: $goal_nginx ($(ratio "$med_p_rps" "$med_n_rps")×);"
  echo "p99 under 5 ms at half load: $goal_p99 ($(ms "$m_p99") ms$([[ $mod_kind == paced ]] && echo ", the median of $ROUNDS runs"))."
  echo
  echo "Stored emails after posthorn stopped (SIGTERM), counted with sqlite3: **$(thousands "$rows") rows** in \`emails\`"
  echo "(status $email_status; as many envelopes, recipients and bodies: $n_env, $n_rcpt, $n_bodies)"
  echo "for $(thousands "$answered_200") sends answered 200 = $(thousands "$((ph_requests - ph_non2xx))") counted by wrk over all posthorn runs"
  echo "(warm-up and half load included) + $extra_sends made with curl; wrk does not count the requests in"
  echo "flight when a run ends, so up to $ph_connections more rows can be right. Request log, \`POST /v1/emails\` by status: $log_status."
  if ((rows >= answered_200 && rows <= max_rows && rows == rows_live)); then
    echo "Every send answered 200 was stored, and committed before the shutdown ($((rows - answered_200)) in flight at run ends)."
  fi
  echo "Before the shutdown: $(thousands "$rows_live") rows committed, database $((db_bytes / 1024)) KiB + WAL $((wal_bytes / 1024)) KiB;"
  echo "\`GET /v1/email?limit=1\` answered \`total\` = ${api_total:-?}."
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

[[ -z $RESULTS ]] || write_results_section send_emails "$section"

if [[ ${#problems[@]} -gt 0 ]]; then
  say "posthorn misbehaved during the benchmark:"
  for p in "${problems[@]}"; do say "  - $p"; done
  if ((server_problems > 0)); then
    say "server log (warnings and errors, first 20):"
    grep -E ' (warning|error|critical) ' "$tmp/posthorn.log" | head -n 20 >&2 || true
  fi
  exit 1
fi
