#!/usr/bin/env bash
# Benchmark: end-to-end delivery — messages per second from `POST /v1/emails` to the final
# 250 at a local SMTP sink, for posthorn (DKIM-signing every message) next to Postfix
# relaying the same load to the same sink, in the same run, on loopback.
#
# What one run does:
#   1. starts Postfix's smtp-sink (`smtp-sink -u nobody -c`, which prints its counters:
#      the messages it has answered 250 after DATA are counted there) on a free port of
#      127.0.0.1;
#   2. starts Postfix from a private configuration directory and a private queue in a
#      temporary directory (never /etc/postfix nor /var/spool/postfix): one smtpd listener
#      on a free port of 127.0.0.1, relayhost = that sink, everything from 127.0.0.0/8
#      relayed, no chroot, its log to a file (maillog_file);
#   3. starts dnsmasq and posthorn on a fresh data dir as bench/send_emails.sh does, the
#      domain mail.example.com VERIFIED against dnsmasq (so that every message is DKIM
#      signed), with POSTHORN_DELIVERY_RELAY = the sink (every message goes there); with
#      STORE=pg its store is a fresh database on a durable PostgreSQL server (PG_URL, or one
#      of its own from tools/pg_test_server.py with PH_PG_DURABLE=1), whose processes' CPU
#      time and memory count as posthorn's;
#   4. writes once to the machine's free memory (touch_free_memory in bench/lib.sh: on a
#      fresh VM a page's first write costs a fault in the host); then for each size (1 KB,
#      then 100 KB) and each of $ROUNDS rounds, in rotating order:
#      Postfix, loaded with `smtp-source -s $SESSIONS -d -m $MESSAGES -l <size>`, and
#      posthorn, loaded with exactly $MESSAGES `POST /v1/emails` by a small asyncio client
#      over $CONNECTIONS keep-alive connections; each is timed from the start of the
#      load to the sink having counted $MESSAGES more messages (end to end), its CPU time
#      (user+system; for Postfix every process of the instance, those that ended included,
#      through the master's cutime/cstime) and its memory sampled every $SAMPLE_MS ms (the
#      sum of RSS, and of PSS, over the processes; posthorn's VmHWM too);
#   5. when posthorn falls short of GOAL x Postfix's rate, samples it with `perf record -g`
#      during one more 1 KB run of $PROFILE_MESSAGES messages and prints where its
#      CPU time goes (by shared object and by symbol);
#   6. stops everything it started, and replaces the delivery section of $RESULTS (with
#      STORE=sqlite only: with STORE=pg the section goes to SECTION_FILE, for bench/pg.sh).
#
# Options (environment): MESSAGES=10000 ROUNDS=2 SESSIONS=20 (smtp-source sessions)
#   CONNECTIONS=20 (HTTP connections) SIZES="1024 102400" (bytes of message body / text)
#   PH_CONNECTIONS_PER_DOMAIN=20 (posthorn's sessions to the relay, as Postfix's default
#   destination concurrency, 20) SAMPLE_MS=200 TIMEOUT=900 (s, per run)
#   PROFILE=auto|0|1 PROFILE_MESSAGES=3000 NOISY_PCT=10 PH_BIN=build/posthorn
#   RESULTS=bench/RESULTS.md (empty: do not write it) KEEP_TMP=1 (keep the temp dir)
#   STORE=sqlite|pg (posthorn's store) PG_URL= (STORE=pg: a running server's URL, with the
#   right to create databases; empty: start one) PG_PID= (that server's postmaster, whose
#   processes' CPU and memory are counted with posthorn's) GOAL=3 (sqlite), 2 (pg): the
#   ratio to Postfix the issue asks for
#   SECTION_FILE= (also write the markdown section there) SUMMARY_FILE= (write there, one
#   line per size, "size postfix_msgs_per_s posthorn_msgs_per_s ratio goal_met problems").
# Run as root (Postfix's master must be started by root); inherited POSTHORN_* variables
# are ignored.
# Exit status: 0 ok; 1 a run did not deliver every message, or posthorn misbehaved (the
# results are written all the same, with the problems listed); 2 bad usage or a missing tool.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

MESSAGES=${MESSAGES:-10000}
ROUNDS=${ROUNDS:-2}
SESSIONS=${SESSIONS:-20}
CONNECTIONS=${CONNECTIONS:-20}
SIZES=${SIZES:-1024 102400}
PH_CONNECTIONS_PER_DOMAIN=${PH_CONNECTIONS_PER_DOMAIN:-20}
SAMPLE_MS=${SAMPLE_MS:-200}
TIMEOUT=${TIMEOUT:-900}
PROFILE=${PROFILE:-auto}
PROFILE_MESSAGES=${PROFILE_MESSAGES:-3000}
NOISY_PCT=${NOISY_PCT:-10}
PH_BIN=${PH_BIN:-build/posthorn}
RESULTS=${RESULTS-bench/RESULTS.md}
STORE=${STORE:-sqlite}
PG_URL=${PG_URL:-}
PG_PID=${PG_PID:-}
SECTION_FILE=${SECTION_FILE:-}
SUMMARY_FILE=${SUMMARY_FILE:-}
SEND_RATE=100000000 # limits.send_rate_per_minute: its maximum, so that nothing is throttled
DOMAIN=mail.example.com
FROM="Bench <bench@$DOMAIN>"
TO=user@example.net
DKIM_ZONE=dkim.posthorn.test
SPF_INCLUDE=spf.posthorn.test
INBOUND_MX=mx.posthorn.test

say() { printf '[delivery] %s\n' "$*" >&2; }
for v in MESSAGES ROUNDS SESSIONS CONNECTIONS PH_CONNECTIONS_PER_DOMAIN SAMPLE_MS TIMEOUT PROFILE_MESSAGES; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')" 2
done
for s in $SIZES; do [[ $s =~ ^[1-9][0-9]*$ ]] || die "SIZES must be positive integers (got '$SIZES')" 2; done
[[ $PROFILE =~ ^(auto|0|1)$ ]] || die "PROFILE must be auto, 0 or 1" 2
[[ $STORE =~ ^(sqlite|pg)$ ]] || die "STORE must be sqlite or pg" 2
if [[ $STORE == pg ]]; then
  GOAL=${GOAL:-2}
  if [[ -n $RESULTS ]]; then
    say "STORE=pg: the delivery section of $RESULTS is SQLite's; this run's section goes to SECTION_FILE (bench/pg.sh)"
    RESULTS=
  fi
  [[ -z $PG_URL || $PG_PID =~ ^[1-9][0-9]*$ ]] || die "PG_URL needs PG_PID, its postmaster's PID" 2
fi
GOAL=${GOAL:-3}
[[ $GOAL =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "GOAL must be a number (got '$GOAL')" 2
[[ $(id -u) == 0 ]] || die "run as root: Postfix's master process must be started by root" 2

export PATH="$PATH:/usr/sbin:/sbin"
missing=()
store_tool=sqlite3
[[ $STORE == sqlite ]] || store_tool=psql
for tool in $store_tool curl timeout awk sort pgrep postfix postconf postsuper smtp-source smtp-sink script; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
DNSMASQ=$(command -v dnsmasq 2>/dev/null || echo /usr/sbin/dnsmasq)
[[ -x $DNSMASQ ]] || missing+=(dnsmasq)
PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3 2>/dev/null || echo)
[[ -n $PY ]] || missing+=(python3)
if [[ ${#missing[@]} -gt 0 ]]; then
  die "missing tools: ${missing[*]} — install them with scripts/install-deps.sh --bench (postfix with smtp-source and smtp-sink; sqlite3, curl, python3, dnsmasq-base, postgresql-15 from the base set)" 2
fi
[[ -x $PH_BIN ]] || die "no posthorn binary at $PH_BIN — build it first (make build), or set PH_BIN" 2
id postfix >/dev/null 2>&1 || die "no postfix user: is Postfix installed (scripts/install-deps.sh --bench)?" 2

while read -r name; do unset "$name"; done < <(compgen -e | grep '^POSTHORN_' || true)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/posthorn-bench.XXXXXX")
# Postfix's daemons (user postfix) must reach their queue under it.
chmod 755 "$tmp"
ph_pid=
ph_exit=
dns_pid=
sink_pid=
pg_pid=
pg_pid_ours=1
pf_master=
pf_conf=
bg_pid=
perf_pid=
sampler_pid=

# ---- process control ---------------------------------------------------------------

stop_sink() {
  [[ -n $sink_pid ]] || return 0
  kill -TERM "$sink_pid" 2>/dev/null || true
  if ! wait_gone "$sink_pid" 10; then kill -KILL "$sink_pid" 2>/dev/null || true; fi
  wait "$sink_pid" 2>/dev/null || true
  sink_pid=
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n $bg_pid ]]; then kill -TERM "$bg_pid" 2>/dev/null || true; fi
  if [[ -n $perf_pid ]]; then kill -INT "$perf_pid" 2>/dev/null || true; fi
  if [[ -n $sampler_pid ]]; then kill -TERM "$sampler_pid" 2>/dev/null || true; fi
  stop_posthorn
  stop_postfix
  stop_dnsmasq
  stop_sink
  if ((pg_pid_ours)); then stop_pg; fi
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

# ---- the machine and the software ---------------------------------------------------

nproc_n=$(nproc)
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
[[ -n $cpu_model ]] || cpu_model=unknown
# shellcheck disable=SC1091
os_name=$( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || echo unknown)
py_version=$("$PY" -c 'import platform; print(platform.python_version())')
ph_commit=$(binary_commit)
# A copy, so that a rebuild during the run cannot change the binary under the benchmark.
cp "$PH_BIN" "$tmp/posthorn"
ph_sha=$(sha256sum "$tmp/posthorn" | cut -c1-12)
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
tck=$(getconf CLK_TCK)

# ---- the runner: load, end-to-end clock, memory samples -----------------------------

# runner.py SINK_OUT TARGET TIMEOUT SAMPLE_MS MEM -- COMMAND...: starts the load command,
# polls the sink's counter (the last "mesg=N" smtp-sink printed) every 5 ms until it
# reaches TARGET, and meanwhile samples the memory of MEM ("tree:PID", a process and its
# children, or "pid:PID", or several of them joined by commas) every SAMPLE_MS ms; prints
# "elapsed_s load_elapsed_s load_rc sink_count peak_rss_kib peak_pss_kib peak_procs"
# (elapsed: from the start of the load to the sink reaching TARGET; -1 if it did not
# within TIMEOUT s).
cat >"$tmp/runner.py" <<'PY'
import os, re, subprocess, sys, time

sink, target, timeout, sample_ms, mem = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
cmd = sys.argv[sys.argv.index("--") + 1:]
specs = [(k, int(p)) for k, p in (m.split(":") for m in mem.split(","))]
mesg = re.compile(rb"mesg=(\d+)")

def sink_count():
    with open(sink, "rb") as f:
        f.seek(0, 2)
        size = f.tell()
        f.seek(max(0, size - 256))
        found = mesg.findall(f.read())
    return int(found[-1]) if found else 0

def pids():
    out = [root for _, root in specs]
    roots = {root for kind, root in specs if kind == "tree"}
    if roots:
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat") as f:
                        if int(f.read().rsplit(")", 1)[1].split()[1]) in roots:
                            out.append(int(d))
                except (OSError, IndexError, ValueError):
                    pass
    return out

def memory():
    rss = pss = n = 0
    for p in pids():
        try:
            with open(f"/proc/{p}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
            n += 1
        except OSError:
            pass
    return rss, pss, n

peak = [0, 0, 0]
def sample():
    rss, pss, n = memory()
    peak[0], peak[1], peak[2] = max(peak[0], rss), max(peak[1], pss), max(peak[2], n)

sample()
t0 = time.monotonic()
proc = subprocess.Popen(cmd, stdout=open(os.environ["RUNNER_OUT"], "wb"), stderr=subprocess.STDOUT)
next_sample = t0 + sample_ms / 1000
load_elapsed = None
elapsed = -1.0
count = sink_count()
while True:
    now = time.monotonic()
    if load_elapsed is None and proc.poll() is not None:
        load_elapsed = now - t0
    count = sink_count()
    if count >= target:
        elapsed = now - t0
        break
    if now - t0 > timeout:
        break
    if now >= next_sample:
        sample()
        next_sample = now + sample_ms / 1000
    time.sleep(0.005)
sample()
try:
    rc = proc.wait(timeout=max(1.0, timeout - (time.monotonic() - t0)))
except subprocess.TimeoutExpired:
    proc.kill()
    rc = proc.wait()
if load_elapsed is None:
    load_elapsed = time.monotonic() - t0
print(f"{elapsed:.4f} {load_elapsed:.4f} {rc} {count} {peak[0]} {peak[1]} {peak[2]}")
PY

sink_count() {
  tail -c 256 "$tmp/sink.out" 2>/dev/null | tr '\r' '\n' | awk -F'mesg=' 'NF > 1 { n = $2 + 0 } END { print n + 0 }'
}

# ---- the sink ----------------------------------------------------------------------

free_port
sink_port=$REPLY
# start_sink [SMTP-SINK OPTIONS]: the counters go to $tmp/sink.out (appended).
start_sink() {
  : >"$tmp/sink.out" # a new sink counts from 0
  smtp-sink -u nobody -c "$@" "127.0.0.1:$sink_port" 1024 >>"$tmp/sink.out" 2>>"$tmp/sink.err" &
  sink_pid=$!
  for ((i = 0; i < 100; i++)); do
    (exec 3<>"/dev/tcp/127.0.0.1/$sink_port") 2>/dev/null && break
    kill -0 "$sink_pid" 2>/dev/null || { cat "$tmp/sink.err" >&2; die "smtp-sink exited at start"; }
    sleep 0.1
  done
  (exec 3<>"/dev/tcp/127.0.0.1/$sink_port") 2>/dev/null || die "smtp-sink did not listen on 127.0.0.1:$sink_port"
  say "smtp-sink: pid $sink_pid on 127.0.0.1:$sink_port"
}
# First with -D: a copy of each message to a file, to check that posthorn's are DKIM-signed;
# restarted without it before anything is measured.
# smtp-sink runs as nobody and writes a file per message, named after the prefix given.
mkdir -p "$tmp/dump"
chown nobody "$tmp/dump"
start_sink -D "$tmp/dump/msg-"

# ---- Postfix -----------------------------------------------------------------------

# A private instance: main.cf and master.cf in $tmp/postfix/etc, the queue in
# $tmp/postfix/spool, the data directory (master.lock) in $tmp/postfix/data.
free_port
pf_port=$REPLY
pf_root="$tmp/postfix"
pf_conf="$pf_root/etc"
mkdir -p "$pf_conf" "$pf_root/spool" "$pf_root/data"
cp /etc/postfix/master.cf "$pf_conf/"
for f in dynamicmaps.cf dynamicmaps.cf.d postfix-files postfix-files.d; do
  [[ -e /etc/postfix/$f ]] && cp -r "/etc/postfix/$f" "$pf_conf/"
done
: >"$pf_conf/main.cf"
chown postfix:postfix "$pf_root/data"
postconf -c "$pf_conf" -e \
  "compatibility_level = 3.6" \
  "queue_directory = $pf_root/spool" "data_directory = $pf_root/data" \
  "maillog_file_prefixes = $pf_root" "maillog_file = $pf_root/maillog" \
  "syslog_name = postfix-bench" "myhostname = relay.posthorn.test" \
  "inet_interfaces = 127.0.0.1" "inet_protocols = ipv4" \
  "mydestination =" "mynetworks = 127.0.0.0/8" \
  "relayhost = [127.0.0.1]:$sink_port" \
  "smtpd_relay_restrictions = permit_mynetworks, reject" \
  "smtp_tls_security_level = none" "smtpd_tls_security_level = none" \
  "alias_maps =" "alias_database =" "local_recipient_maps ="
postconf -c "$pf_conf" -M# smtp/inet
postconf -c "$pf_conf" -M "127.0.0.1:$pf_port/inet=127.0.0.1:$pf_port inet n - n - - smtpd"
# No chroot: a chroot under the private queue would need copies of /etc files.
postconf -c "$pf_conf" -F '*/*/chroot = n'
# Postfix prints its complaints on stderr only when that is a terminal: hence script(1).
if ! script -qec "postfix -c '$pf_conf' start" /dev/null >"$tmp/postfix-start.txt" 2>&1; then
  cat "$tmp/postfix-start.txt" "$pf_root/maillog" >&2 2>/dev/null || true
  die "Postfix did not start"
fi
for ((i = 0; i < 100; i++)); do
  pf_master=$(head -n1 "$pf_root/spool/pid/master.pid" 2>/dev/null | tr -d ' ' || true)
  [[ -n $pf_master ]] && (exec 3<>"/dev/tcp/127.0.0.1/$pf_port") 2>/dev/null && break
  sleep 0.1
done
[[ -n $pf_master ]] && kill -0 "$pf_master" 2>/dev/null || die "Postfix's master is not running (see $pf_root/maillog)"
pf_version=$(postconf -c "$pf_conf" -h mail_version)
say "Postfix $pf_version: master pid $pf_master, smtpd on 127.0.0.1:$pf_port, queue $pf_root/spool"

# ---- dnsmasq and posthorn (as bench/send_emails.sh) ----------------------------------

# dnsmasq, posthorn on a fresh data dir (and, with STORE=pg, a fresh database) with an account,
# a key and the domain verified, delivering to the sink (start_posthorn_with_verified_domain,
# bench/lib.sh).
PH_RELAY="127.0.0.1:$sink_port"
ph_extra_env=("POSTHORN_DELIVERY_MAX_CONNECTIONS_PER_DOMAIN=$PH_CONNECTIONS_PER_DOMAIN")
if [[ $STORE == pg ]]; then
  if [[ -z $PG_URL ]]; then
    start_pg
  else
    pg_admin_url=$PG_URL
    pg_pid=$PG_PID
    pg_pid_ours=0
    pg_version=$(psql -XAtq "$pg_admin_url" -c 'SHOW server_version' 2>/dev/null | awk '{ print $1 }')
    [[ -n $pg_version ]] || die "psql cannot reach the PostgreSQL server at $(pg_redact "$PG_URL")" 2
  fi
  delivery_url=$(pg_create_db "posthorn_delivery_$$")
  ph_extra_env+=("POSTHORN_DATABASE_URL=$delivery_url")
fi
start_posthorn_with_verified_domain

# ---- the loads ---------------------------------------------------------------------

# client.py HOST PORT KEY BODY N CONNECTIONS: sends exactly N `POST /v1/emails` of BODY over
# CONNECTIONS keep-alive connections (HTTP/1.1, one request at a time on each), reading every
# answer; prints "posts_ok OK posts_bad BAD statuses {...}" (OK: answered 200). A client of
# its own rather than wrk: wrk runs for a time, not for a number of requests, and its Lua
# hooks did not make it stop after exactly N sends.
cat >"$tmp/client.py" <<'PY'
import asyncio, sys

host, port, key, body_path = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
total, conns = int(sys.argv[5]), int(sys.argv[6])
body = open(body_path, "rb").read()
request = (f"POST /v1/emails HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {key}\r\n"
           f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
left = total
ok = bad = 0
statuses = {}

async def worker():
    global left, ok, bad
    reader, writer = await asyncio.open_connection(host, port)
    while left > 0:
        left -= 1
        writer.write(request)
        status = int((await reader.readline()).split()[1])
        length = 0
        while True:
            line = await reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if length:
            await reader.readexactly(length)
        if status == 200:
            ok += 1
        else:
            bad += 1
            statuses[status] = statuses.get(status, 0) + 1
    writer.close()

async def main():
    await asyncio.gather(*(worker() for _ in range(min(conns, total))))

asyncio.run(main())
print(f"posts_ok {ok} posts_bad {bad} statuses {statuses}")
sys.exit(0 if bad == 0 else 1)
PY

# CPU ticks of posthorn, and with STORE=pg of the PostgreSQL server's processes too.
posthorn_ticks() {
  if [[ $STORE == pg ]]; then
    echo $(($(cpu_ticks "$ph_pid") + $(tree_ticks "$pg_pid")))
  else
    cpu_ticks "$ph_pid"
  fi
}

# run_one WHO SIZE LABEL [COUNT]: one end-to-end run; sets R to
# "msgs_per_s elapsed_s accept_per_s cpu_ms_per_msg peak_rss_mib peak_pss_mib procs steal% other%"
# or returns 1 (the sink did not count COUNT messages in time, or the load failed).
R=
problems=()
run_one() {
  local who=$1 size=$2 label=$3 n=${4:-$MESSAGES} s0 c0 c1 m0 m1 w0 w1 out mem cmd line
  local elapsed load_el load_rc count rss pss procs cpu noise
  R=
  out="$tmp/load-$label.txt"
  s0=$(sink_count)
  if [[ $who == postfix ]]; then
    # The queue is empty between runs (every message was delivered; anything left is removed).
    postsuper -c "$pf_conf" -d ALL >/dev/null 2>&1 || true
    mem="tree:$pf_master"
    cmd=(smtp-source -s "$SESSIONS" -d -m "$n" -l "$size" -f "bench@x.test" -t "$TO" "127.0.0.1:$pf_port")
  else
    mem="pid:$ph_pid"
    [[ $STORE == sqlite ]] || mem+=",tree:$pg_pid"
    cmd=("$PY" "$tmp/client.py" 127.0.0.1 "$ph_port" "$key" "$tmp/body-$size.json" "$n" "$CONNECTIONS")
  fi
  m0=$(machine_ticks)
  w0=$(child_ticks)
  if [[ $who == postfix ]]; then c0=$(postfix_ticks); else c0=$(posthorn_ticks); fi
  if ! RUNNER_OUT="$out" bounded $((TIMEOUT + 60)) "$tmp/runner-$label.txt" "$tmp/runner-$label.err" \
    "$PY" "$tmp/runner.py" "$tmp/sink.out" $((s0 + n)) "$TIMEOUT" "$SAMPLE_MS" "$mem" -- "${cmd[@]}"; then
    cat "$tmp/runner-$label.err" "$out" >&2 2>/dev/null || true
    problems+=("$label: the runner failed")
    return 1
  fi
  if [[ $who == postfix ]]; then c1=$(postfix_ticks); else c1=$(posthorn_ticks); fi
  w1=$(child_ticks)
  m1=$(machine_ticks)
  read -r elapsed load_el load_rc count rss pss procs <"$tmp/runner-$label.txt"
  if [[ $who == posthorn ]] && ! kill -0 "$ph_pid" 2>/dev/null; then
    say "posthorn died during $label; its log ends with:"
    tail -n 30 "$tmp/posthorn.log" >&2 || true
    exit 1
  fi
  if [[ $load_rc != 0 ]]; then
    problems+=("$label: the load ($(basename "${cmd[0]}")) exited with status $load_rc: $(tail -c 300 "$out" | tr '\n' ' ')")
  fi
  if [[ $who == posthorn ]]; then
    line=$(grep -E '^posts_ok ' "$out" || true)
    [[ $line == "posts_ok $n posts_bad 0 "* ]] || problems+=("$label: the client: '${line:-no count}' for $n POSTs")
  fi
  if [[ $elapsed == -1.0000 ]]; then
    problems+=("$label: the sink counted $((count - s0)) of $n messages within ${TIMEOUT}s")
    return 1
  fi
  cpu=$(calc "($c1 - $c0) * 1000 / $tck / $n")
  noise=$(noise_between "$m0" "$m1" $((c1 - c0 + w1 - w0)))
  R="$(calc "$n / $elapsed") $elapsed $(calc "$n / $load_el") $cpu $(calc "$rss / 1024") $(calc "$pss / 1024") $procs $noise"
  say "$label: $(fmt '%.0f' "$(calc "$n / $elapsed")") msg/s end to end (${elapsed}s; load done after ${load_el}s), $(fmt '%.3f' "$cpu") CPU-ms/msg, peak RSS $(fmt '%.1f' "$(calc "$rss / 1024")") MiB, PSS $(fmt '%.1f' "$(calc "$pss / 1024")") MiB over up to $procs processes; noise $noise"
}

for size in $SIZES; do
  write_send_body "$tmp/body-$size.json" "$size" "posthorn delivery benchmark: $size bytes of text"
done

# One send with curl, delivered to the sink and DKIM-signed, before measuring anything.
first_size=${SIZES%% *}
s0=$(sink_count)
code=$(api POST /v1/emails "$tmp/send.json" "$(cat "$tmp/body-$first_size.json")")
first_id=$(jfield "$tmp/send.json" id)
[[ $code == 200 && $first_id == em_* ]] || die "POST /v1/emails answered $code: $(head -c 500 "$tmp/send.json")"
for ((i = 0; i < 300; i++)); do
  (($(sink_count) > s0)) && break
  sleep 0.1
done
(($(sink_count) > s0)) || die "the first email did not reach the sink within 30 s: $(tail -n 20 "$tmp/posthorn.log")"
if [[ $STORE == pg ]]; then
  raw_bytes=$(store_sql "$db" "SELECT length(raw) FROM emails WHERE id = '$first_id'")
else
  raw_bytes=$(store_sql "$db" "SELECT length(b.raw) FROM emails e JOIN email_bodies b ON b.id = e.body_id WHERE e.id = '$first_id';")
fi
# The message as the sink received it: signed at delivery (d= the domain).
dump=$(grep -l -m1 "^Subject: posthorn delivery benchmark" "$tmp"/dump/msg-* 2>/dev/null | head -n1 || true)
[[ -n $dump ]] || die "the sink kept no copy of the first email ($(ls "$tmp/dump" | head))"
dkim_header=$(grep -m1 -i '^DKIM-Signature:' "$dump" 2>/dev/null | cut -c1-100 || true)
[[ $dkim_header == *"d=$DOMAIN"* ]] ||
  die "the first email reached the sink without a DKIM-Signature of $DOMAIN: $(head -c 1500 "$dump")"
signed_bytes=$(wc -c <"$dump")
code=$(api GET "/v1/emails/$first_id" "$tmp/first.json")
first_status=$(jfield "$tmp/first.json" status)
say "the first email reached the sink (status ${first_status:-?}, $raw_bytes bytes stored)"
# A Postfix message too, so that both have started their delivery processes once.
if ! bounded 60 "$tmp/pf-first.txt" "$tmp/pf-first.txt" smtp-source -m 1 -l "$first_size" -f bench@x.test -t "$TO" "127.0.0.1:$pf_port"; then
  cat "$tmp/pf-first.txt" >&2
  die "smtp-source could not send one message to Postfix"
fi
for ((i = 0; i < 300; i++)); do
  (($(sink_count) > s0 + 1)) && break
  sleep 0.1
done
(($(sink_count) > s0 + 1)) || die "Postfix did not relay one message to the sink within 30 s: $(tail -n 20 "$pf_root/maillog")"
stop_sink
start_sink
# And one more send from each, through the restarted sink (which counts from 0 again).
code=$(api POST /v1/emails "$tmp/send.json" "$(cat "$tmp/body-$first_size.json")")
[[ $code == 200 ]] || die "POST /v1/emails answered $code: $(head -c 500 "$tmp/send.json")"
bounded 60 "$tmp/pf-first.txt" "$tmp/pf-first.txt" smtp-source -m 1 -l "$first_size" -f bench@x.test -t "$TO" "127.0.0.1:$pf_port" ||
  die "smtp-source could not send one message to Postfix: $(cat "$tmp/pf-first.txt")"
for ((i = 0; i < 300; i++)); do
  (($(sink_count) >= 2)) && break
  sleep 0.1
done
(($(sink_count) >= 2)) || die "the restarted sink did not get a message from each within 30 s"
sleep 1

# ---- measure -----------------------------------------------------------------------

touch_free_memory
noisy=()
declare -A res
si=0
for size in $SIZES; do
  si=$((si + 1))
  for ((r = 1; r <= ROUNDS; r++)); do
    if (((r + si) % 2 == 0)); then order=(postfix posthorn); else order=(posthorn postfix); fi
    for who in "${order[@]}"; do
      label="$who-$size-r$r"
      if run_one "$who" "$size" "$label"; then
        res[$who,$size,$r]=$R
        read -r _ _ _ _ _ _ _ st ot <<<"$R"
        note_noise "$label" "$st" "$ot"
      else
        res[$who,$size,$r]=
      fi
      sleep 1 # lets the queues settle (Postfix's qmgr, posthorn's status updates)
    done
  done
done
ph_hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$ph_pid/status")

# field WHO SIZE INDEX: the median over the rounds of one field of R (1-based), or "".
field_median() {
  local who=$1 size=$2 k=$3 vals=() r v
  for ((r = 1; r <= ROUNDS; r++)); do
    v=${res[$who,$size,$r]:-}
    [[ -n $v ]] || continue
    vals+=("$(awk -v k="$k" '{ print $k }' <<<"$v")")
  done
  [[ ${#vals[@]} -gt 0 ]] || return 0
  median "${vals[@]}"
}

# ---- profile -----------------------------------------------------------------------

first_small=$first_size
short=0
for size in $SIZES; do
  p=$(field_median posthorn "$size" 1)
  f=$(field_median postfix "$size" 1)
  if [[ -z $p || -z $f ]] || ! awk -v p="$p" -v f="$f" -v g="$GOAL" 'BEGIN { exit !(p >= g * f) }'; then short=1; fi
done
profiled=0
perf_top_dso=
perf_top_sym=
if [[ $PROFILE == 1 || ($PROFILE == auto && $short == 1) ]]; then
  if command -v perf >/dev/null 2>&1 && perf record -q -o /dev/null -- true >/dev/null 2>&1; then
    say "profiling posthorn (perf record -g) over $PROFILE_MESSAGES messages of $first_small bytes"
    perf record -q -g -F 499 -p "$ph_pid" -o "$tmp/perf.data" >/dev/null 2>"$tmp/perf-record.err" &
    perf_pid=$!
    sleep 0.5
    if run_one posthorn "$first_small" "profile" "$PROFILE_MESSAGES"; then :; fi
    kill -INT "$perf_pid" 2>/dev/null || true
    wait "$perf_pid" 2>/dev/null || true
    perf_pid=
    if [[ -s $tmp/perf.data ]]; then
      perf_top_dso=$(perf report -i "$tmp/perf.data" --stdio --no-children --sort dso -q 2>/dev/null |
        awk 'NF >= 2 && $1 ~ /%$/ { printf "%s %s\n", $1, $2 }' | head -n 8 || true)
      perf_top_sym=$(perf report -i "$tmp/perf.data" --stdio --no-children --sort dso,sym -q -g none 2>/dev/null |
        awk '$1 ~ /%$/ { pct = $1; $1 = ""; sub(/^ +/, ""); print pct " " $0 }' | head -n 25 || true)
      profiled=1
    else
      say "perf recorded nothing: $(head -c 300 "$tmp/perf-record.err")"
    fi
  else
    say "perf cannot record here: no profile"
  fi
fi

# ---- what posthorn stored ----------------------------------------------------------

email_status=$(store_sql "$db" \
  "SELECT status || ': ' || COUNT(*) FROM emails GROUP BY status ORDER BY status;" | paste -sd, - | sed 's/,/, /g')
server_problems=$(grep -Ec ' (warning|error|critical) ' "$tmp/posthorn.log" || true)
pf_problems=$(grep -Ec '(warning|error|fatal|panic):' "$pf_root/maillog" || true)
pf_status_sent=$(grep -c 'status=sent' "$pf_root/maillog" || true)
pf_left=$(find "$pf_root/spool/incoming" "$pf_root/spool/active" "$pf_root/spool/deferred" -type f 2>/dev/null | wc -l)
sink_total=$(sink_count)
stop_posthorn
stop_postfix
stop_dnsmasq
stop_sink
[[ $ph_exit == 0 ]] || problems+=("posthorn exited with status $ph_exit after SIGTERM")
((server_problems == 0)) || problems+=("posthorn logged $server_problems warning/error lines")
((pf_left == 0)) || problems+=("Postfix's queue held $pf_left messages at the end")

# ---- report ------------------------------------------------------------------------

f3() { fmt '%.3f' "$1"; }
f1() { fmt '%.1f' "$1"; }
ratio() { fmt '%.3g' "$(calc "$1 / $2")"; } # 3 significant digits
thousands() { printf "%'d" "$1" 2>/dev/null || echo "$1"; }
kb() { if (($1 >= 1024 && $1 % 1024 == 0)); then echo "$(($1 / 1024)) KB"; else echo "$1 B"; fi; }
yes_no() { if awk "BEGIN { exit !($1) }"; then echo "**met**"; else echo "**not met**"; fi; }
cell() { # WHO SIZE ROUND INDEX FORMAT
  local v=${res[$1,$2,$3]:-}
  if [[ -z $v ]]; then echo "—"; else "$5" "$(awk -v k="$4" '{ print $k }' <<<"$v")"; fi
}

section="$tmp/section.md"
{
  if [[ $STORE == pg ]]; then
    echo "## Delivery on PostgreSQL: end to end, \`POST /v1/emails\` → 250 at a local sink, vs Postfix relaying to the same sink"
  else
    echo "## Delivery: end to end, \`POST /v1/emails\` → 250 at a local sink, vs Postfix relaying to the same sink"
  fi
  echo
  echo "Generated by \`bench/delivery.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC')."
  echo
  echo "- Machine: $nproc_n CPUs, $cpu_model; $os_name, kernel $(uname -r); load average $load_at_start at the start."
  memory_line
  echo "- Software: posthorn $ph_commit (\`$PH_BIN\`, sha256 $ph_sha…), Postfix $pf_version (its smtp-source and smtp-sink),"
  echo "  dnsmasq $dns_version, Python $py_version (the HTTP client)$([[ $STORE == pg ]] && echo ", PostgreSQL $pg_version")."
  echo "- Sink: \`smtp-sink -u nobody -c 127.0.0.1:\$SINK 1024\` (Postfix's; answers 250 to everything and prints"
  echo "  its counters): a message counts once the sink has taken its DATA. One sink for both."
  echo "- Postfix: a private instance (main.cf, master.cf, queue and log under the temporary directory), one"
  echo "  \`smtpd\` on 127.0.0.1, \`relayhost = [127.0.0.1]:\$SINK\`, \`mynetworks = 127.0.0.0/8\`, no chroot,"
  echo "  no TLS, no alias maps, defaults otherwise (20 sessions to the relay, \`in_flow_delay\` 1 s); signs nothing."
  echo "  Load: \`smtp-source -s $SESSIONS -d -m $MESSAGES -l <size> -f bench@x.test -t $TO 127.0.0.1:\$PORT\`"
  echo "  ($SESSIONS sessions, each reusing its connection)."
  if [[ $STORE == pg ]]; then
    echo "- posthorn: fresh data dir, its store a fresh database on a durable PostgreSQL $pg_version on the same"
    echo "  machine (\`POSTHORN_DATABASE_URL\`; $(pg_settings)); the PostgreSQL"
    echo "  server's processes count as posthorn's in the CPU and memory figures. The domain $DOMAIN VERIFIED against"
  else
    echo "- posthorn: fresh data dir (SQLite, WAL, synchronous=FULL), the domain $DOMAIN VERIFIED against"
  fi
  echo "  dnsmasq, so that every message is DKIM-signed (checked on the first one, as the sink received it:"
  echo "  \`${dkim_header}…\`);"
  echo "  \`POSTHORN_DELIVERY_RELAY=127.0.0.1:\$SINK\`, \`POSTHORN_DELIVERY_TLS=off\`,"
  echo "  \`POSTHORN_DELIVERY_MAX_CONNECTIONS_PER_DOMAIN=$PH_CONNECTIONS_PER_DOMAIN\` (Postfix's default destination concurrency),"
  echo "  \`POSTHORN_LIMITS_SEND_RATE_PER_MINUTE=$SEND_RATE\`. Load: a Python asyncio client sends exactly $MESSAGES"
  echo "  \`POST /v1/emails\` (\`{\"from\",\"to\",\"subject\",\"text\"}\` with <size> bytes of text) over $CONNECTIONS keep-alive"
  echo "  connections, one request at a time on each (wrk runs for a time, not for a number of requests)."
  echo "  The first send ($(kb "$first_size") of text) is stored as a $raw_bytes-byte message and reached the sink signed, $signed_bytes bytes."
  echo "- Each run: from the start of the load to the sink having counted $MESSAGES more messages (end to end:"
  echo "  acceptance, queue, signing for posthorn, SMTP to the sink); $ROUNDS round(s) per size, Postfix and posthorn"
  echo "  alternating. CPU = user+system time per message of all the server's processes (Postfix: master"
  echo "  and every daemon, those that ended included); the load tools and the sink are not counted."
  echo "  Memory = peak over the run of the sum of RSS, and of PSS (shared pages divided among the"
  echo "  processes that share them), over the server's processes, sampled every $SAMPLE_MS ms."
  echo "  accepted/s = messages / the time until the load tool had all its answers (delivery may still be"
  echo "  under way); noise = the machine's CPU steal / CPU used by processes other than the server and"
  echo "  the load (the sink included), in % of all CPUs, during the run."
  echo
  if [[ $STORE == pg ]]; then
    echo "Reproduce: \`bench/pg.sh\`, or with the binary built \`STORE=pg bench/delivery.sh\` (as root; \`MESSAGES\`, \`ROUNDS\`, \`SIZES\` in the environment)."
  else
    echo "Reproduce: \`make bench\`, or with the binary built \`bench/delivery.sh\` (as root; \`MESSAGES\`, \`ROUNDS\`, \`SIZES\` in the environment)."
  fi
  echo
  echo "| size | round | server | msg/s end to end | s | accepted/s | CPU ms/msg | peak RSS MiB | peak PSS MiB | processes | noise |"
  echo "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  for size in $SIZES; do
    for ((r = 1; r <= ROUNDS; r++)); do
      for who in postfix posthorn; do
        v=${res[$who,$size,$r]:-}
        if [[ -z $v ]]; then
          echo "| $(kb "$size") | $r | $who | failed | | | | | | | |"
          continue
        fi
        read -r a b c d e f g h i <<<"$v"
        echo "| $(kb "$size") | $r | $who | $(int "$a") | $(f1 "$b") | $(int "$c") | $(f3 "$d") | $(f1 "$e") | $(f1 "$f") | $g | $h% / $i% |"
      done
    done
  done
  echo
  echo "Medians over the rounds, and the goals of the issue (posthorn at least $GOAL× Postfix's end-to-end"
  if [[ $STORE == pg ]]; then
    echo "rate with DKIM signing on; memory is no goal on PostgreSQL, whose processes, shared buffers included,"
    echo "count with posthorn's here: the last column only says whether the sum is below Postfix's, on PSS):"
  else
    echo "rate with DKIM signing on; in less memory than Postfix's processes use together, compared on PSS):"
  fi
  echo
  echo "| size | Postfix msg/s | posthorn msg/s | **posthorn / Postfix** | $GOAL× goal | CPU ms/msg Postfix | posthorn | peak PSS MiB Postfix | posthorn | $([[ $STORE == pg ]] && echo "less than Postfix" || echo "memory goal") |"
  echo "|---|---:|---:|---:|---|---:|---:|---:|---:|---|"
  for size in $SIZES; do
    fr=$(field_median postfix "$size" 1)
    pr=$(field_median posthorn "$size" 1)
    fc=$(field_median postfix "$size" 4)
    pc=$(field_median posthorn "$size" 4)
    fm=$(field_median postfix "$size" 6)
    pm=$(field_median posthorn "$size" 6)
    if [[ -z $fr || -z $pr ]]; then
      echo "| $(kb "$size") | ${fr:+$(int "$fr")} | ${pr:+$(int "$pr")} | — | not measured | | | | | |"
      continue
    fi
    echo "| $(kb "$size") | $(int "$fr") | $(int "$pr") | **$(ratio "$pr" "$fr")×** | $(yes_no "$pr >= $GOAL * $fr") |" \
      "$(f3 "$fc") | $(f3 "$pc") ($(ratio "$pc" "$fc")×) | $(f1 "$fm") | $(f1 "$pm") | $(if [[ $STORE == pg ]]; then awk -v a="$pm" -v b="$fm" 'BEGIN { print (a < b ? "yes" : "no") }'; else yes_no "$pm < $fm"; fi) |"
  done
  echo
  echo "posthorn's peak resident memory over the whole run (VmHWM): $(f1 "$(calc "$ph_hwm / 1024")") MiB$([[ $STORE == pg ]] && echo ", PostgreSQL's not included")."
  echo "Postfix's peak RSS sum counts the shared libraries once per process (up to the number of"
  echo "processes above), hence the PSS comparison."
  echo
  if [[ ${#noisy[@]} -gt 0 ]]; then
    echo "Disturbed runs (steal or other processes above $NOISY_PCT% of the machine): $(printf '%s; ' "${noisy[@]}" | sed 's/; $//')."
    echo
  fi
  if ((profiled)); then
    echo "Profile of posthorn (\`perf record -g -F 499 -p\` during one more run of $(thousands "$PROFILE_MESSAGES") messages of $(kb "$first_small"),"
    echo "self time, \`perf report --no-children\`), by object:"
    echo
    echo '```'
    echo "$perf_top_dso"
    echo '```'
    echo
    echo "and by symbol (the first 25):"
    echo
    echo '```'
    echo "$perf_top_sym"
    echo '```'
    echo
  fi
  echo "After the runs: posthorn's emails by status: $email_status; Postfix's log has $pf_status_sent"
  echo "\`status=sent\`, $pf_problems warning/error lines; the sink counted $(thousands "$sink_total") messages in all (since its restart after the DKIM check)."
  echo
  if [[ ${#problems[@]} -gt 0 ]]; then
    echo "**Problems observed in this run:**"
    echo
    for p in "${problems[@]}"; do echo "- $p"; done
  else
    echo "No problems observed: every run delivered all its messages, no warnings in posthorn's log."
  fi
} >"$section"

echo
cat "$section"
echo

[[ -z $RESULTS ]] || write_results_section delivery "$section"
[[ -z $SECTION_FILE ]] || cp "$section" "$SECTION_FILE"
if [[ -n $SUMMARY_FILE ]]; then
  for size in $SIZES; do
    fr=$(field_median postfix "$size" 1)
    pr=$(field_median posthorn "$size" 1)
    if [[ -n $fr && -n $pr ]]; then
      met=0
      awk -v p="$pr" -v f="$fr" -v g="$GOAL" 'BEGIN { exit !(p >= g * f) }' && met=1
      echo "$size $fr $pr $(calc "$pr / $fr") $met ${#problems[@]}"
    else
      echo "$size ${fr:--} ${pr:--} - 0 ${#problems[@]}"
    fi
  done >"$SUMMARY_FILE"
fi

if [[ ${#problems[@]} -gt 0 ]]; then
  say "problems:"
  for p in "${problems[@]}"; do say "  - $p"; done
  exit 1
fi
