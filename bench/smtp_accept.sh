#!/usr/bin/env bash
# Benchmark: SMTP acceptance (issue 6) — posthorn's two SMTP listeners next to Postfix's
# smtpd, in the same run, on loopback: messages accepted per second (each answered 250 only
# once it is durably stored), CPU per message and peak memory, for 1 KB and 100 KB
# messages over 20 concurrent sessions. The goal of the issue: posthorn at 2x Postfix's
# rate. Nothing is delivered anywhere: only acceptance is measured, on both sides.
#
# What one run does:
#   1. starts Postfix from a private configuration directory and a private queue in a
#      temporary directory (never /etc/postfix nor /var/spool/postfix), with two smtpd
#      listeners on 127.0.0.1:
#        - "inbound": relay_domains = mail.example.com, reject_unauth_destination, STARTTLS
#          offered (smtp-source does not use it);
#        - "submission": STARTTLS required (smtpd_tls_security_level = encrypt), then
#          AUTH PLAIN through Cyrus SASL (a sasldb written with Perl's DB_File; when that is
#          not possible, no AUTH: see the results), relaying only for authenticated clients;
#      every accepted message is put on hold (smtpd_data_restrictions =
#      check_client_access static:HOLD): cleanup writes and fsyncs it into the hold queue,
#      where the queue manager never looks, so nothing is delivered (and in_flow_delay = 0,
#      as PEERS.md says for acceptance alone);
#   2. starts dnsmasq and posthorn on a fresh data dir as bench/delivery.sh does: the domain
#      mail.example.com VERIFIED against dnsmasq and given config.inbound = true; the
#      delivery relay (POSTHORN_DELIVERY_RELAY) is a loopback listener that takes
#      connections and never answers (as in bench/send_emails.sh), so the delivery engine
#      claims one batch, opens its sessions and waits for a greeting instead of delivering;
#   3. warms both up, writes once to the machine's free memory (touch_free_memory in
#      bench/lib.sh: on a fresh VM a page's first write costs a fault in the host), then
#      for each size and each of $ROUNDS rounds, in rotating order:
#        - inbound: `smtp-source -s $SESSIONS -d -m $MESSAGES -l <size>` to
#          support@mail.example.com, against Postfix's inbound smtpd and posthorn's inbound
#          listener;
#        - submission: bench/smtp_load.py (Python, a thread per session; smtp-source speaks neither
#          STARTTLS nor AUTH): $SESSIONS sessions, each STARTTLS + AUTH PLAIN once, then
#          transactions until $MESSAGES messages in all, against Postfix's submission smtpd
#          and posthorn's submission listener (the API key as user name and password);
#      each run is timed from the start of the load to its last answer; success is counted
#      by what each side stored (posthorn: rows of inbound_emails / emails, with sqlite3;
#      Postfix: files in its hold queue, and `postqueue -j`) and by the load ending without
#      errors; CPU time (user+system; for Postfix every process of the instance, those that
#      ended included, through the master's cutime/cstime), memory (the sum of RSS and of
#      PSS over the server's processes, sampled every $SAMPLE_MS ms) and the load's own CPU
#      are measured;
#      before each run, it waits (up to $BUILD_WAIT s) until no cc1plus or ninja process
#      runs: the machine has 2 CPUs and C++ builds happen on it;
#      posthorn's fsync/fdatasync and pwrite64 calls are counted during its runs (`perf stat`);
#   4. when posthorn falls short of 2x Postfix's rate, samples it with `perf record -g`
#      during one more inbound and one more submission run of $PROFILE_MESSAGES messages of
#      the size where its ratio was lowest and prints where its CPU time goes, then repeats
#      each of those runs under `perf trace -s` (time spent in system calls, per thread);
#   5. stops everything it started, and replaces its section of $RESULTS.
#
# Options (environment): MESSAGES=5000 (per run) ROUNDS=2 SESSIONS=20 SIZES="1024 102400"
#   (bytes of message body) PIPELINING=0 (1: the submission client sends MAIL, RCPT, DATA
#   in one write) CLIENT_PROCS=1 (processes of the submission client) SAMPLE_MS=200
#   TIMEOUT=900 (s, per run) BUILD_WAIT=600 (s) PROFILE=auto|0|1 PROFILE_MESSAGES=2000
#   NOISY_PCT=10 PH_BIN=build/posthorn (copied to the temporary directory first)
#   RESULTS=bench/RESULTS.md (empty: do not write it) KEEP_TMP=1 (keep the temp dir).
# Run as root (Postfix's master must be started by root); inherited POSTHORN_* variables
# are ignored.
# Exit status: 0 ok; 1 a run did not store every message, or a server misbehaved (the
# results are written all the same, with the problems listed); 2 bad usage or a missing tool.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

MESSAGES=${MESSAGES:-5000}
ROUNDS=${ROUNDS:-2}
SESSIONS=${SESSIONS:-20}
SIZES=${SIZES:-1024 102400}
PIPELINING=${PIPELINING:-0}
CLIENT_PROCS=${CLIENT_PROCS:-1}
SAMPLE_MS=${SAMPLE_MS:-200}
TIMEOUT=${TIMEOUT:-900}
BUILD_WAIT=${BUILD_WAIT:-600}
PROFILE=${PROFILE:-auto}
PROFILE_MESSAGES=${PROFILE_MESSAGES:-2000}
NOISY_PCT=${NOISY_PCT:-10}
PH_BIN=${PH_BIN:-build/posthorn}
RESULTS=${RESULTS-bench/RESULTS.md}
WARMUP_MESSAGES=200
GOAL=2 # the issue's goal: posthorn/Postfix msg/s
SEND_RATE=100000000 # limits.send_rate_per_minute: its maximum, so that nothing is throttled
DOMAIN=mail.example.com
IN_FROM=load@sender.example.org
IN_TO=support@$DOMAIN
SUB_FROM=bench@$DOMAIN
SUB_HEADER_FROM="Bench <$SUB_FROM>"
SUB_TO=user@example.net
SASL_REALM=bench.posthorn.test
DKIM_ZONE=dkim.posthorn.test
SPF_INCLUDE=spf.posthorn.test
INBOUND_MX=mx.posthorn.test

say() { printf '[smtp_accept] %s\n' "$*" >&2; }
for v in MESSAGES ROUNDS SESSIONS CLIENT_PROCS SAMPLE_MS TIMEOUT PROFILE_MESSAGES; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')" 2
done
[[ $BUILD_WAIT =~ ^[0-9]+$ ]] || die "BUILD_WAIT must be a whole number of seconds" 2
for s in $SIZES; do [[ $s =~ ^[1-9][0-9]*$ ]] || die "SIZES must be positive integers (got '$SIZES')" 2; done
[[ -n ${SIZES// /} ]] || die "SIZES is empty" 2
[[ $PROFILE =~ ^(auto|0|1)$ ]] || die "PROFILE must be auto, 0 or 1" 2
[[ $PIPELINING =~ ^(0|1)$ ]] || die "PIPELINING must be 0 or 1" 2
[[ $(id -u) == 0 ]] || die "run as root: Postfix's master process must be started by root" 2

export PATH="$PATH:/usr/sbin:/sbin"
missing=()
for tool in sqlite3 curl timeout awk sort pgrep openssl postfix postconf postsuper postqueue smtp-source script; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
DNSMASQ=$(command -v dnsmasq 2>/dev/null || echo /usr/sbin/dnsmasq)
[[ -x $DNSMASQ ]] || missing+=(dnsmasq)
PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3 2>/dev/null || echo)
[[ -n $PY ]] || missing+=(python3)
if [[ ${#missing[@]} -gt 0 ]]; then
  die "missing tools: ${missing[*]} — install them with scripts/install-deps.sh --bench (postfix with smtp-source; sqlite3, curl, python3, dnsmasq-base, openssl from the base set)" 2
fi
[[ -x $PH_BIN ]] || die "no posthorn binary at $PH_BIN — build it first (make build), or set PH_BIN" 2
[[ -f bench/smtp_load.py ]] || die "bench/smtp_load.py is missing" 2
id postfix >/dev/null 2>&1 || die "no postfix user: is Postfix installed (scripts/install-deps.sh --bench)?" 2

while read -r name; do unset "$name"; done < <(compgen -e | grep '^POSTHORN_' || true)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/posthorn-bench.XXXXXX")
# Postfix's daemons (user postfix) must reach their queue under it.
chmod 755 "$tmp"
ph_pid=
ph_exit=
dns_pid=
hold_pid=
pf_master=
pf_conf=
bg_pid=
perf_pid=
pstat_pid=

# ---- process control ---------------------------------------------------------------

stop_pid() { # PID: TERM, then KILL after 10 s
  [[ -n $1 ]] || return 0
  kill -TERM "$1" 2>/dev/null || true
  if ! wait_gone "$1" 10; then kill -KILL "$1" 2>/dev/null || true; fi
  wait "$1" 2>/dev/null || true
}

# Both servers, dnsmasq and the listener that holds posthorn's delivery sessions.
stop_servers() {
  stop_posthorn
  stop_postfix
  stop_pid "$dns_pid"
  dns_pid=
  stop_pid "$hold_pid"
  hold_pid=
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [[ -n $bg_pid ]]; then kill -TERM "$bg_pid" 2>/dev/null || true; fi
  if [[ -n $perf_pid ]]; then kill -INT "$perf_pid" 2>/dev/null || true; fi
  if [[ -n $pstat_pid ]]; then kill -INT "$pstat_pid" 2>/dev/null || true; fi
  stop_servers
  if [[ -n ${KEEP_TMP:-} ]]; then
    say "kept $tmp"
  else
    rm -rf "$tmp"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

# Free ports of 127.0.0.1, all at once: each one is bound (TCP and UDP, without
# SO_REUSEADDR, so that a listener, a connection in TIME_WAIT or a UDP socket on it makes
# it fail) and held until all are found, so that they are distinct; they are taken outside
# the kernel's ephemeral range (ip_local_port_range), so that no outgoing connection made
# meanwhile (the loads' own) can take one before its server binds it.
ports=$("$PY" - 8 <<'PY'
import random, socket, sys
n = int(sys.argv[1])
try:
    lo, hi = map(int, open("/proc/sys/net/ipv4/ip_local_port_range").read().split())
except OSError:
    lo, hi = 32768, 60999
candidates = [p for p in range(10000, 65536) if not lo <= p <= hi]
random.shuffle(candidates)
held, found = [], []
for p in candidates:
    t = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        t.bind(("127.0.0.1", p))
        u.bind(("127.0.0.1", p))
    except OSError:
        t.close(); u.close()
        continue
    held += [t, u]
    found.append(p)
    if len(found) == n:
        break
print(" ".join(map(str, found)))
PY
)
read -r pf_in_port pf_sub_port ph_port ph_sub_port ph_in_port dns_port hold_port _ <<<"$ports"
[[ -n $hold_port ]] || die "could not find 8 free ports on 127.0.0.1 (got '$ports')"

# ---- measurements ------------------------------------------------------------------

# Builds on this machine (another engineer's): before each measured run, wait until no
# compiler or ninja runs, up to BUILD_WAIT seconds.
build_waits=()
builds_running() { pgrep -x cc1plus >/dev/null 2>&1 || pgrep -x ninja >/dev/null 2>&1; }
wait_for_builds() { # LABEL
  local start=$SECONDS announced=0
  while builds_running && ((SECONDS - start < BUILD_WAIT)); do
    if ((!announced)); then
      say "$1: a build is running (cc1plus or ninja); waiting up to ${BUILD_WAIT}s"
      announced=1
    fi
    sleep 5
  done
  if ((!announced)); then
    return 0
  elif builds_running; then
    build_waits+=("$1: a build was still running after ${BUILD_WAIT}s of waiting; measured anyway")
  else
    build_waits+=("$1: waited $((SECONDS - start))s for a build to end")
  fi
}

# ---- the machine and the software ---------------------------------------------------

nproc_n=$(nproc)
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
[[ -n $cpu_model ]] || cpu_model=unknown
# shellcheck disable=SC1091
os_name=$( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || echo unknown)
py_version=$("$PY" -c 'import platform; print(platform.python_version())')
ossl_version=$(openssl version | awk '{ print $2 }')
ph_commit=$(binary_commit)
# Copies, so that a rebuild (or an edit) during the run cannot change what is measured.
cp "$PH_BIN" "$tmp/posthorn"
cp bench/smtp_load.py "$tmp/smtp_load.py"
ph_sha=$(sha256sum "$tmp/posthorn" | cut -c1-12)
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
tck=$(getconf CLK_TCK)

# ---- the runner: load, clock, memory samples ----------------------------------------

# runner.py TIMEOUT SAMPLE_MS MEM -- COMMAND...: runs the load command (its output to
# $RUNNER_OUT) and, until it ends, samples the memory of MEM ("tree:PID", a process and its
# children, or "pid:PID") every SAMPLE_MS ms; prints
# "elapsed_s rc peak_rss_kib peak_pss_kib peak_procs load_cpu_s"
# (elapsed: from the start of the load to its end; load_cpu_s: the load's user+system
# time, its child processes included, from wait4).
cat >"$tmp/runner.py" <<'PY'
import os, subprocess, sys, threading, time

timeout, sample_ms, mem = float(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
cmd = sys.argv[sys.argv.index("--") + 1:]
kind, root = mem.split(":")
root = int(root)

def pids():
    if kind == "pid":
        return [root]
    out = [root]
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == root:
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
done = threading.Event()
result = {}
t0 = time.monotonic()
proc = subprocess.Popen(cmd, stdout=open(os.environ["RUNNER_OUT"], "wb"), stderr=subprocess.STDOUT)

def reap():
    _, status, usage = os.wait4(proc.pid, 0)
    result["end"] = time.monotonic()
    result["rc"] = os.waitstatus_to_exitcode(status)
    result["cpu"] = usage.ru_utime + usage.ru_stime
    done.set()

threading.Thread(target=reap, daemon=True).start()
while not done.wait(sample_ms / 1000):
    sample()
    if time.monotonic() - t0 > timeout:
        proc.kill()
        done.wait()
        result["rc"] = -9
        break
sample()
print(f"{result['end'] - t0:.4f} {result['rc']} {peak[0]} {peak[1]} {peak[2]} {result['cpu']:.4f}")
PY

# ---- Postfix -----------------------------------------------------------------------

# A private instance: main.cf, master.cf and the SASL configuration in $tmp/postfix/etc,
# the queue in $tmp/postfix/spool, the data directory (master.lock) in $tmp/postfix/data.
pf_root="$tmp/postfix"
pf_conf="$pf_root/etc"
mkdir -p "$pf_conf" "$pf_root/spool" "$pf_root/data"
cp /etc/postfix/master.cf "$pf_conf/"
for f in dynamicmaps.cf dynamicmaps.cf.d postfix-files postfix-files.d; do
  [[ -e /etc/postfix/$f ]] && cp -r "/etc/postfix/$f" "$pf_conf/"
done
: >"$pf_conf/main.cf"
chown postfix:postfix "$pf_root/data"
# The certificate of Postfix's STARTTLS: self-signed, RSA-2048 and SHA-256 like the one
# posthorn makes in its data dir.
openssl req -x509 -newkey rsa:2048 -sha256 -nodes -days 3650 -subj "/CN=relay.posthorn.test" \
  -keyout "$pf_root/tls.key" -out "$pf_root/tls.crt" >"$tmp/openssl.txt" 2>&1 ||
  die "openssl could not make a certificate: $(cat "$tmp/openssl.txt")"
chmod 600 "$pf_root/tls.key"

# SASL for the submission listener: Cyrus SASL (Postfix's smtpd is built with it) with the
# sasldb auxprop plugin. saslpasswd2 (sasl2-bin) is usually not installed; the sasldb is a
# Berkeley DB hash whose keys are "user NUL realm NUL userPassword", which Perl's DB_File
# (libdb 5.3, as libsasldb) writes. The user is posthorn's API key, as on posthorn.
pf_sasl=0
pf_sasl_note=
sasldb_plugin=
for f in /usr/lib/*/sasl2/libsasldb.so* /usr/lib/sasl2/libsasldb.so*; do
  if [[ -e $f ]]; then
    sasldb_plugin=$f
    break
  fi
done
if ! postconf -a 2>/dev/null | grep -qx cyrus; then
  pf_sasl_note="Postfix's smtpd has no Cyrus SASL"
elif [[ -z $sasldb_plugin ]]; then
  pf_sasl_note="the Cyrus sasldb plugin (libsasl2-modules-db) is not installed"
elif ! perl -MDB_File -e 1 >/dev/null 2>&1; then
  pf_sasl_note="Perl's DB_File (to write the sasldb) is missing"
else
  pf_sasl=1
fi

# The listeners. The inbound one mirrors an MX for mail.example.com; the submission one
# the usual `submission` service of master.cf (TLS required, SASL, relay for the
# authenticated only).
pf_sub_opts="-o syslog_name=postfix-bench/submission -o smtpd_tls_security_level=encrypt -o smtpd_tls_auth_only=yes"
if ((pf_sasl)); then
  pf_sub_opts+=" -o smtpd_sasl_auth_enable=yes -o smtpd_relay_restrictions=permit_sasl_authenticated,reject"
else
  pf_sub_opts+=" -o mynetworks=127.0.0.0/8 -o smtpd_relay_restrictions=permit_mynetworks,reject"
fi
postconf -c "$pf_conf" -e \
  "compatibility_level = 3.6" \
  "queue_directory = $pf_root/spool" "data_directory = $pf_root/data" \
  "maillog_file_prefixes = $pf_root" "maillog_file = $pf_root/maillog" \
  "syslog_name = postfix-bench" "myhostname = relay.posthorn.test" \
  "inet_interfaces = 127.0.0.1" "inet_protocols = ipv4" \
  "mydestination =" "mynetworks = 192.0.2.1/32" "relay_domains = $DOMAIN" \
  "smtpd_relay_restrictions = reject_unauth_destination" \
  "smtpd_data_restrictions = check_client_access static:HOLD" \
  "in_flow_delay = 0" \
  "smtpd_tls_security_level = may" "smtpd_tls_cert_file = $pf_root/tls.crt" \
  "smtpd_tls_key_file = $pf_root/tls.key" "smtp_tls_security_level = none" \
  "smtpd_sasl_type = cyrus" "smtpd_sasl_path = smtpd" "smtpd_sasl_local_domain = $SASL_REALM" \
  "alias_maps =" "alias_database =" "local_recipient_maps ="
postconf -c "$pf_conf" -M# smtp/inet
postconf -c "$pf_conf" -M "127.0.0.1:$pf_in_port/inet=127.0.0.1:$pf_in_port inet n - n - - smtpd"
# shellcheck disable=SC2086
postconf -c "$pf_conf" -M "127.0.0.1:$pf_sub_port/inet=127.0.0.1:$pf_sub_port inet n - n - - smtpd $pf_sub_opts"
# No chroot: a chroot under the private queue would need copies of /etc files.
postconf -c "$pf_conf" -F '*/*/chroot = n'

# ---- dnsmasq, the silent relay and posthorn -----------------------------------------

# dnsmasq answers only for the names it is authoritative for (--local); the records of the
# domain are added once posthorn has made them, by a restart on the same port.
mkdir -p "$tmp/dns"
printf 'local=/%s/\n' test example example.com example.net example.org >"$tmp/dns/base.conf"
start_dnsmasq "$tmp/dns/base.conf"
dns_version=$("$DNSMASQ" --version 2>/dev/null | awk 'NR == 1 { print $3 }')
say "dnsmasq $dns_version: pid $dns_pid on 127.0.0.1:$dns_port"

# The delivery relay that holds posthorn's delivery engine: it listens (the kernel
# completes the connections) and never accepts nor answers.
"$PY" -c '
import signal, socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(1024)
print("listening", flush=True)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
signal.pause()' "$hold_port" >"$tmp/hold.txt" 2>&1 &
hold_pid=$!
for ((i = 0; i < 100; i++)); do
  grep -q listening "$tmp/hold.txt" 2>/dev/null && break
  kill -0 "$hold_pid" 2>/dev/null || break
  sleep 0.1
done
grep -q listening "$tmp/hold.txt" 2>/dev/null || die "the silent relay did not start on 127.0.0.1:$hold_port: $(cat "$tmp/hold.txt")"
held_sessions() {
  if command -v ss >/dev/null 2>&1; then
    ss -Htn state established "( dport = :$hold_port )" 2>/dev/null | wc -l
  else
    echo "?"
  fi
}

ph_env=(
  "POSTHORN_SERVER_DATA_DIR=$tmp/data"
  "POSTHORN_HTTP_LISTEN=127.0.0.1:$ph_port"
  "POSTHORN_SMTP_SUBMISSION_LISTEN=127.0.0.1:$ph_sub_port"
  "POSTHORN_SMTP_INBOUND_LISTEN=127.0.0.1:$ph_in_port"
  "POSTHORN_SMTP_HOSTNAME=posthorn.test"
  "POSTHORN_DNS_SERVERS=127.0.0.1:$dns_port"
  "POSTHORN_DNS_DKIM_ZONE=$DKIM_ZONE"
  "POSTHORN_DNS_SPF_INCLUDE=$SPF_INCLUDE"
  "POSTHORN_DNS_INBOUND_MX=$INBOUND_MX"
  "POSTHORN_LIMITS_SEND_RATE_PER_MINUTE=$SEND_RATE"
  "POSTHORN_DELIVERY_RELAY=127.0.0.1:$hold_port"
  "POSTHORN_DELIVERY_TLS=off"
  "POSTHORN_DELIVERY_CONNECT_TIMEOUT_S=3600"
  "POSTHORN_DELIVERY_COMMAND_TIMEOUT_S=3600"
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
base="http://127.0.0.1:$ph_port"

env "${ph_env[@]}" "$tmp/posthorn" serve >"$tmp/posthorn.log" 2>&1 &
ph_pid=$!
if ! wait_http "$ph_pid" 20 200 -H "$auth" "$base/v1/domains"; then
  tail -n 30 "$tmp/posthorn.log" >&2 || true
  die "posthorn did not answer 200 on $base/v1/domains within 20 s"
fi
[[ -f $db ]] || die "no database at $db (has the default data dir layout changed?)"
say "posthorn $ph_commit: pid $ph_pid, HTTP 127.0.0.1:$ph_port, submission :$ph_sub_port, inbound :$ph_in_port, data dir $tmp/data"

# The domain: VERIFIED against dnsmasq (as bench/delivery.sh and tests/support/domains.py
# do), then opened for inbound mail.
code=$(api POST /v1/domains "$tmp/domain.json" "{\"domain\":\"$DOMAIN\"}")
[[ $code == 201 ]] || die "POST /v1/domains answered $code: $(head -c 500 "$tmp/domain.json")"
bounded 60 "$tmp/zone.txt" "$tmp/zone.err" env "${ph_env[@]}" "$tmp/posthorn" dns zone || {
  cat "$tmp/zone.txt" "$tmp/zone.err" >&2
  die "posthorn dns zone failed"
}
if ! "$PY" - "$tmp/domain.json" "$tmp/zone.txt" "$INBOUND_MX" >"$tmp/dns/records.conf" 2>"$tmp/dns/records.err" <<'PY'; then
import json, re, sys
domain = json.load(open(sys.argv[1]))
zone = {}
for line in open(sys.argv[2]):
    if line.startswith(";") or not line.strip():
        continue
    owner = line.split()[0].rstrip(".")
    zone[owner] = "".join(re.findall(r'"([^"]*)"', line.split(" ; ")[0]))

def txt(name, value):
    parts = [value[i:i + 255] for i in range(0, len(value), 255)] or [""]
    print("txt-record=%s,%s" % (name, ",".join('"' + p.replace('"', '\\"') + '"' for p in parts)))

recs = domain["records"]
for r in recs["dkim"]:
    target = r["value"]
    if target not in zone:
        sys.exit(f"posthorn dns zone has no TXT for {target}")
    print(f"cname={r['host']},{target}")
    print(f"host-record={target},127.0.0.10")
    txt(target, zone[target])
txt(recs["spf"]["host"], recs["spf"]["value"])
txt(recs["dmarc"]["host"], recs["dmarc"]["value"])
print(f"mx-host={recs['inbound']['host']},{sys.argv[3]},10")
print(f"host-record={sys.argv[3]},127.0.0.11")
PY
  cat "$tmp/dns/records.err" "$tmp/domain.json" "$tmp/zone.txt" >&2
  die "cannot make the DNS records of $DOMAIN"
fi
cat "$tmp/dns/base.conf" "$tmp/dns/records.conf" >"$tmp/dns/domain.conf"
stop_pid "$dns_pid"
start_dnsmasq "$tmp/dns/domain.conf"
code=$(api POST "/v1/domains/$DOMAIN/verify" "$tmp/verify.json")
status=$(jfield "$tmp/verify.json" status)
if [[ $code != 200 || $status != VERIFIED ]]; then
  cat "$tmp/dns/domain.conf" >&2
  die "POST /v1/domains/$DOMAIN/verify answered $code, status '${status:-?}': $(head -c 1500 "$tmp/verify.json")"
fi
code=$(api PATCH "/v1/domains/$DOMAIN" "$tmp/patch.json" '{"config":{"inbound":true}}')
[[ $code == 200 ]] || die "PATCH /v1/domains/$DOMAIN {config: {inbound: true}} answered $code: $(head -c 500 "$tmp/patch.json")"
code=$(api GET "/v1/domains/$DOMAIN" "$tmp/domain-now.json")
[[ $code == 200 && $(jfield "$tmp/domain-now.json" config inbound) == True && $(jfield "$tmp/domain-now.json" status) == VERIFIED ]] ||
  die "GET /v1/domains/$DOMAIN after the PATCH answered $code: $(head -c 500 "$tmp/domain-now.json")"
say "domain $DOMAIN: VERIFIED against dnsmasq, inbound on"

# ---- Postfix, started ----------------------------------------------------------------

if ((pf_sasl)); then
  mkdir -p "$pf_conf/sasl"
  # Debian's Postfix reads the Cyrus configuration from $config_directory/sasl/<smtpd_sasl_path>.conf.
  cat >"$pf_conf/sasl/smtpd.conf" <<EOF
pwcheck_method: auxprop
auxprop_plugin: sasldb
mech_list: PLAIN LOGIN
sasldb_path: $pf_conf/sasl/sasldb2
EOF
  perl -MDB_File -MFcntl -e '
    tie my %h, "DB_File", $ARGV[0], O_RDWR | O_CREAT, 0640, $DB_HASH or die "$ARGV[0]: $!\n";
    $h{"$ARGV[1]\0$ARGV[2]\0userPassword"} = $ARGV[1];
    untie %h' "$pf_conf/sasl/sasldb2" "$key" "$SASL_REALM" || die "cannot write the sasldb"
  chown root:postfix "$pf_conf/sasl/sasldb2"
fi
# Postfix prints its complaints on stderr only when that is a terminal: hence script(1).
if ! script -qec "postfix -c '$pf_conf' start" /dev/null >"$tmp/postfix-start.txt" 2>&1; then
  cat "$tmp/postfix-start.txt" "$pf_root/maillog" >&2 2>/dev/null || true
  die "Postfix did not start"
fi
for ((i = 0; i < 100; i++)); do
  pf_master=$(head -n1 "$pf_root/spool/pid/master.pid" 2>/dev/null | tr -d ' ' || true)
  [[ -n $pf_master ]] && (exec 3<>"/dev/tcp/127.0.0.1/$pf_sub_port") 2>/dev/null && break
  sleep 0.1
done
[[ -n $pf_master ]] && kill -0 "$pf_master" 2>/dev/null || die "Postfix's master is not running (see $pf_root/maillog)"
pf_version=$(postconf -c "$pf_conf" -h mail_version)
say "Postfix $pf_version: master pid $pf_master, inbound smtpd on 127.0.0.1:$pf_in_port, submission smtpd on :$pf_sub_port (SASL: $pf_sasl${pf_sasl_note:+, $pf_sasl_note})"

# ---- the loads -----------------------------------------------------------------------

# The fsync and fdatasync calls posthorn makes during each of its runs (its group commit at
# work), and its pwrite64 calls (SQLite writes a page per call), counted by `perf stat` on
# the syscall tracepoints (counting in the kernel, no sampling), when perf can do that
# here. Not free: with a syscall tracepoint enabled every system call of posthorn takes the
# kernel's slow path (2-5% of the HTTP sends' full-load rate, bench/send_emails.sh), so the
# figures here are slightly against posthorn, whose runs alone are counted. Postfix's
# cleanup fsyncs each queue file: one per message.
pstat_ok=0
if command -v perf >/dev/null 2>&1 &&
  perf stat -x, -o /dev/null -e syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync,syscalls:sys_enter_pwrite64 -- true >/dev/null 2>&1; then
  pstat_ok=1
fi
pstat_start() { # OUT
  ((pstat_ok)) || return 0
  perf stat -x, -o "$1" -e syscalls:sys_enter_fsync,syscalls:sys_enter_fdatasync,syscalls:sys_enter_pwrite64 \
    -p "$ph_pid" >/dev/null 2>&1 &
  pstat_pid=$!
  sleep 0.2 # attached to every thread before the load starts
}
# Sets PS to "fsyncs pwrites" (the calls counted), or "- -".
pstat_stop() { # OUT
  PS="- -"
  [[ -n $pstat_pid ]] || return 0
  kill -INT "$pstat_pid" 2>/dev/null || true
  wait "$pstat_pid" 2>/dev/null || true
  pstat_pid=
  PS=$(awk -F, '$3 ~ /^syscalls:sys_enter_f(data)?sync$/ && $1 ~ /^[0-9]+$/ { n += $1; ok = 1 }
    $3 == "syscalls:sys_enter_pwrite64" && $1 ~ /^[0-9]+$/ { w += $1; okw = 1 }
    END { print (ok ? n : "-"), (okw ? w : "-") }' "$1" 2>/dev/null || echo "- -")
}

pf_held() { find "$pf_root/spool/hold" -type f 2>/dev/null | wc -l; }
pf_elsewhere() { find "$pf_root/spool/incoming" "$pf_root/spool/active" "$pf_root/spool/deferred" "$pf_root/spool/maildrop" -type f 2>/dev/null | wc -l; }
ph_rows() { # TABLE
  sqlite3 "$db" '.timeout 30000' "SELECT COUNT(*) FROM $1;"
}

# load_cmd KIND WHO SIZE COUNT TAG: sets CMD to the load's command line.
CMD=()
load_cmd() {
  local kind=$1 who=$2 size=$3 n=$4 tag=$5 port
  if [[ $kind == inbound ]]; then
    if [[ $who == postfix ]]; then port=$pf_in_port; else port=$ph_in_port; fi
    CMD=(smtp-source -s "$SESSIONS" -d -m "$n" -l "$size" -f "$IN_FROM" -t "$IN_TO" "127.0.0.1:$port")
  else
    if [[ $who == postfix ]]; then port=$pf_sub_port; else port=$ph_sub_port; fi
    CMD=("$PY" "$tmp/smtp_load.py" --port "$port" --messages "$n" --sessions "$SESSIONS" --size "$size"
      --mail-from "$SUB_FROM" --rcpt-to "$SUB_TO" --header-from "$SUB_HEADER_FROM" --starttls
      --procs "$CLIENT_PROCS" --tag "$tag")
    if [[ $who == posthorn ]] || ((pf_sasl)); then CMD+=(--user "$key" --password "$key"); fi
    if ((PIPELINING)); then CMD+=(--pipelining); fi
  fi
}

# stored_count KIND WHO: what the server has stored (posthorn: rows; Postfix: held files).
stored_count() {
  if [[ $2 == postfix ]]; then
    pf_held
  elif [[ $1 == inbound ]]; then
    ph_rows inbound_emails
  else
    ph_rows emails
  fi
}

# run_one KIND WHO SIZE LABEL [COUNT]: one measured run; sets R to
# "msg_per_s elapsed_s cpu_ms_per_msg rss_mib pss_mib procs client_ms_per_msg client_pct
#  server_pct stored p50 p99 steal% other% syncs pwrites" (syncs, pwrites: posthorn's
# fsync+fdatasync and pwrite64 calls, "-" when not counted) or returns 1.
R=
problems=()
declare -A first_errors
run_one() {
  local kind=$1 who=$2 size=$3 label=$4 n=${5:-$MESSAGES} s0 s1 c0 c1 m0 m1 w0 w1 out mem
  local elapsed rc rss pss procs lcpu cpu noise p50=- p99=- json i q
  R=
  PS="- -"
  out="$tmp/load-$label.txt"
  wait_for_builds "$label"
  if [[ $who == postfix ]]; then
    # The hold queue is emptied before each run; what it holds after the run is what this
    # run stored.
    postsuper -c "$pf_conf" -d ALL >/dev/null 2>&1 || true
    mem="tree:$pf_master"
  else
    mem="pid:$ph_pid"
  fi
  s0=$(stored_count "$kind" "$who")
  load_cmd "$kind" "$who" "$size" "$n" "$label"
  [[ $who != posthorn ]] || pstat_start "$tmp/pstat-$label.txt"
  m0=$(machine_ticks)
  w0=$(child_ticks)
  if [[ $who == postfix ]]; then c0=$(postfix_ticks); else c0=$(cpu_ticks "$ph_pid"); fi
  if ! RUNNER_OUT="$out" bounded $((TIMEOUT + 60)) "$tmp/runner-$label.txt" "$tmp/runner-$label.err" \
    "$PY" "$tmp/runner.py" "$TIMEOUT" "$SAMPLE_MS" "$mem" -- "${CMD[@]}"; then
    cat "$tmp/runner-$label.err" "$out" >&2 2>/dev/null || true
    problems+=("$label: the runner failed")
    pstat_stop "$tmp/pstat-$label.txt"
    return 1
  fi
  if [[ $who == postfix ]]; then c1=$(postfix_ticks); else c1=$(cpu_ticks "$ph_pid"); fi
  w1=$(child_ticks)
  m1=$(machine_ticks)
  pstat_stop "$tmp/pstat-$label.txt"
  read -r elapsed rc rss pss procs lcpu <"$tmp/runner-$label.txt"
  if [[ $who == posthorn ]] && ! kill -0 "$ph_pid" 2>/dev/null; then
    say "posthorn died during $label; its log ends with:"
    tail -n 30 "$tmp/posthorn.log" >&2 || true
    exit 1
  fi
  s1=$(stored_count "$kind" "$who")
  if [[ $who == postfix ]] && ((s1 - s0 < n)); then
    # cleanup answers after the file is in the hold queue; allow a moment all the same.
    for ((i = 0; i < 50 && s1 - s0 < n; i++)); do
      sleep 0.1
      s1=$(stored_count "$kind" "$who")
    done
  fi
  if [[ $rc != 0 ]]; then
    problems+=("$label: the load ($(basename "${CMD[0]}")) exited with status $rc: $(tail -c 400 "$out" | tr '\n' ' ')")
  fi
  if [[ $kind == submission ]]; then
    json=$(grep -E '^\{' "$out" | tail -n1 || true)
    if [[ -n $json ]]; then
      read -r p50 p99 q <<<"$("$PY" -c '
import json, sys
d = json.loads(sys.argv[1])
lat = d.get("latency_ms") or {}
f = lambda v: "-" if v is None else "%.2f" % v
bad = "" if d["ok"] == d["messages"] else "ok %d of %d, refused %d %s, session errors %d, first errors %s" % (
    d["ok"], d["messages"], d["failed"], d["refusals"], d["session_errors"], d["first_errors"])
print(f(lat.get("p50")), f(lat.get("p99")), bad)' "$json")"
      [[ -z $q ]] || problems+=("$label: the client: $q")
    else
      problems+=("$label: the client printed no result: $(tail -c 300 "$out" | tr '\n' ' ')")
    fi
  elif [[ -s $out ]]; then
    first_errors[$label]=$(head -c 300 "$out" | tr '\n' ' ')
  fi
  if ((s1 - s0 != n)); then
    problems+=("$label: $((s1 - s0)) messages stored for $n sent")
  fi
  if [[ $who == postfix ]]; then
    q=$(postqueue -c "$pf_conf" -j 2>/dev/null | grep -c '"queue_name": *"hold"' || true)
    ((q == s1)) || problems+=("$label: postqueue -j lists $q held messages, the hold directory has $s1 files")
    q=$(pf_elsewhere)
    ((q == 0)) || problems+=("$label: $q messages in Postfix's other queues (nothing should leave hold)")
  fi
  cpu=$(calc "($c1 - $c0) * 1000 / $tck / $n")
  noise=$(noise_between "$m0" "$m1" $((c1 - c0 + w1 - w0)))
  R="$(calc "$n / $elapsed") $elapsed $cpu $(calc "$rss / 1024") $(calc "$pss / 1024") $procs"
  R+=" $(calc "$lcpu * 1000 / $n") $(calc "100 * $lcpu / $elapsed") $(calc "100 * ($c1 - $c0) / $tck / $elapsed")"
  R+=" $((s1 - s0)) $p50 $p99 $noise $PS"
  say "$label: $(fmt '%.0f' "$(calc "$n / $elapsed")") msg/s (${elapsed}s), server $(fmt '%.3f' "$cpu") CPU-ms/msg ($(fmt '%.0f' "$(calc "100 * ($c1 - $c0) / $tck / $elapsed")")% of a CPU), load $(fmt '%.3f' "$(calc "$lcpu * 1000 / $n")") CPU-ms/msg ($(fmt '%.0f' "$(calc "100 * $lcpu / $elapsed")")%), peak RSS $(fmt '%.1f' "$(calc "$rss / 1024")") MiB, PSS $(fmt '%.1f' "$(calc "$pss / 1024")") MiB over up to $procs processes; stored $((s1 - s0)); fsync and pwrite calls $PS; noise $noise"
}

# ---- checks and warm-up ----------------------------------------------------------------

# One message of each kind to each server, checked where it was stored; then a warm-up of
# WARMUP_MESSAGES 1 KB messages over all the sessions (Postfix starts its smtpd and cleanup
# processes on demand: they are then running, as on a server in service).
check_one() { # KIND WHO
  local s0 s1 i
  if [[ $2 == postfix ]]; then postsuper -c "$pf_conf" -d ALL >/dev/null 2>&1 || true; fi
  s0=$(stored_count "$1" "$2")
  load_cmd "$1" "$2" 1024 1 "check"
  if ! bounded 60 "$tmp/check-$1-$2.txt" "$tmp/check-$1-$2.txt" "${CMD[@]}"; then
    cat "$tmp/check-$1-$2.txt" >&2
    [[ $2 != postfix ]] || tail -n 20 "$pf_root/maillog" >&2
    [[ $2 != posthorn ]] || tail -n 20 "$tmp/posthorn.log" >&2
    die "one $1 message to $2 failed"
  fi
  for ((i = 0; i < 50; i++)); do
    s1=$(stored_count "$1" "$2")
    ((s1 > s0)) && break
    sleep 0.1
  done
  ((s1 == s0 + 1)) || die "one $1 message to $2: $((s1 - s0)) stored"
}
for kind in inbound submission; do
  for who in postfix posthorn; do check_one "$kind" "$who"; done
done
in_id=$(sqlite3 "$db" '.timeout 10000' "SELECT id FROM inbound_emails LIMIT 1;")
in_raw=$(sqlite3 "$db" '.timeout 10000' "SELECT length(raw) FROM inbound_emails LIMIT 1;")
sub_id=$(sqlite3 "$db" '.timeout 10000' "SELECT id FROM emails LIMIT 1;")
sub_raw=$(sqlite3 "$db" '.timeout 10000' "SELECT length(b.raw) FROM emails e JOIN email_bodies b ON b.id = e.body_id WHERE e.id = '$sub_id';")
code=$(api GET "/v1/emails/inbound/$in_id" "$tmp/in-first.json")
[[ $code == 200 && $(jfield "$tmp/in-first.json" to_address) == "$IN_TO" ]] ||
  die "GET /v1/emails/inbound/$in_id answered $code: $(head -c 500 "$tmp/in-first.json")"
code=$(api GET "/v1/emails/$sub_id" "$tmp/sub-first.json")
sub_status=$(jfield "$tmp/sub-first.json" status)
[[ $code == 200 && $sub_status == QUEUED ]] ||
  die "the submitted email is '${sub_status:-?}' (HTTP $code), not QUEUED: is the silent relay not holding the delivery engine? $(head -c 500 "$tmp/sub-first.json")"
say "checked: one inbound message ($in_raw bytes stored) and one submission ($sub_raw bytes) to each server"
for kind in inbound submission; do
  for who in postfix posthorn; do
    [[ $who != postfix ]] || postsuper -c "$pf_conf" -d ALL >/dev/null 2>&1 || true
    load_cmd "$kind" "$who" 1024 "$WARMUP_MESSAGES" "warmup"
    bounded 300 "$tmp/warmup-$kind-$who.txt" "$tmp/warmup-$kind-$who.txt" "${CMD[@]}" ||
      die "the warm-up ($WARMUP_MESSAGES $kind messages to $who) failed: $(tail -c 500 "$tmp/warmup-$kind-$who.txt")"
  done
done
sleep 2
held_after_warmup=$(held_sessions)
say "warmed up; posthorn's delivery sessions waiting on the silent relay: $held_after_warmup"

# ---- measure -----------------------------------------------------------------------

touch_free_memory
noisy=()
declare -A res
t_measure=$SECONDS
si=0
for size in $SIZES; do
  si=$((si + 1))
  for ((r = 1; r <= ROUNDS; r++)); do
    ki=0
    for kind in inbound submission; do
      ki=$((ki + 1))
      if (((r + si + ki) % 2 == 0)); then order=(postfix posthorn); else order=(posthorn postfix); fi
      for who in "${order[@]}"; do
        label="$kind-$who-$size-r$r"
        if run_one "$kind" "$who" "$size" "$label"; then
          res[$kind,$who,$size,$r]=$R
          read -r _ _ _ _ _ _ _ _ _ _ _ _ st ot _ <<<"$R"
          note_noise "$label" "$st" "$ot"
        else
          res[$kind,$who,$size,$r]=
        fi
        sleep 1
      done
    done
  done
done
t_measure=$((SECONDS - t_measure))
ph_hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$ph_pid/status")

# field_median KIND WHO SIZE INDEX: the median over the rounds of one field of R (1-based).
field_median() {
  local vals=() r v
  for ((r = 1; r <= ROUNDS; r++)); do
    v=${res[$1,$2,$3,$r]:-}
    [[ -n $v ]] || continue
    vals+=("$(awk -v k="$4" '{ print $k }' <<<"$v")")
  done
  [[ ${#vals[@]} -gt 0 ]] || return 0
  median "${vals[@]}"
}
# round_ratios KIND SIZE: posthorn/Postfix msg/s of each round, "r1 r2 ..." ("—" for a failed run).
round_ratios() {
  local r p f out=()
  for ((r = 1; r <= ROUNDS; r++)); do
    p=$(awk '{ print $1 }' <<<"${res[$1,posthorn,$2,$r]:-}")
    f=$(awk '{ print $1 }' <<<"${res[$1,postfix,$2,$r]:-}")
    if [[ -n $p && -n $f ]]; then out+=("$(fmt '%.3g' "$(calc "$p / $f")")×"); else out+=("—"); fi
  done
  echo "${out[*]}"
}
field_max() {
  local r v m=
  for ((r = 1; r <= ROUNDS; r++)); do
    v=${res[$1,$2,$3,$r]:-}
    [[ -n $v ]] || continue
    v=$(awk -v k="$4" '{ print $k }' <<<"$v")
    if [[ -z $m ]] || awk -v a="$v" -v b="$m" 'BEGIN { exit !(a > b) }'; then m=$v; fi
  done
  echo "$m"
}

# ---- profile -----------------------------------------------------------------------

short=0
declare -A prof_size
for kind in inbound submission; do
  worst=
  for size in $SIZES; do
    p=$(field_median "$kind" posthorn "$size" 1)
    f=$(field_median "$kind" postfix "$size" 1)
    if [[ -z $p || -z $f ]]; then
      short=1
      continue
    fi
    q=$(calc "$p / $f")
    awk -v q="$q" -v g="$GOAL" 'BEGIN { exit !(q < g) }' && short=1
    if [[ -z $worst ]] || awk -v q="$q" -v w="$worst" 'BEGIN { exit !(q < w) }'; then
      worst=$q
      prof_size[$kind]=$size
    fi
  done
  [[ -n ${prof_size[$kind]:-} ]] || prof_size[$kind]=${SIZES%% *}
done
declare -A perf_comm perf_dso perf_sym perf_res perf_trace trace_res
profiled=()
if [[ $PROFILE == 1 || ($PROFILE == auto && $short == 1) ]]; then
  if command -v perf >/dev/null 2>&1 && perf record -q -o /dev/null -- true >/dev/null 2>&1; then
    for kind in inbound submission; do
      size=${prof_size[$kind]}
      say "profiling posthorn (perf record -g) over $PROFILE_MESSAGES $kind messages of $size bytes (its lowest ratio)"
      perf record -q -g -F 499 -p "$ph_pid" -o "$tmp/perf-$kind.data" >/dev/null 2>"$tmp/perf-record.err" &
      perf_pid=$!
      sleep 0.5
      if run_one "$kind" posthorn "$size" "profile-$kind-$size" "$PROFILE_MESSAGES"; then perf_res[$kind]=$R; fi
      kill -INT "$perf_pid" 2>/dev/null || true
      wait "$perf_pid" 2>/dev/null || true
      perf_pid=
      # The same run once more under `perf trace -s`: time spent in each system call, per
      # thread; the thread with the most calls is shown (the store's writer, so far).
      if perf trace -s -o /dev/null -- true >/dev/null 2>&1; then
        perf trace -s -p "$ph_pid" -o "$tmp/trace-$kind.txt" >/dev/null 2>"$tmp/perf-trace.err" &
        perf_pid=$!
        sleep 0.5
        if run_one "$kind" posthorn "$size" "trace-$kind-$size" "$PROFILE_MESSAGES"; then trace_res[$kind]=$R; fi
        kill -INT "$perf_pid" 2>/dev/null || true
        wait "$perf_pid" 2>/dev/null || true
        perf_pid=
        perf_trace[$kind]=$(awk '
          /^ *[^ ].* \([0-9]+\), [0-9]+ events,/ { n++; head[n] = $0; split($0, p, ", "); ev[n] = p[2] + 0; next }
          n && /^ +[a-z_0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+/ { if (rows[n] < 8) { body[n] = body[n] $0 "\n"; rows[n]++ } }
          END {
            best = 0
            for (i = 1; i <= n; i++) if (!best || ev[i] > ev[best]) best = i
            if (best) { sub(/^ +/, "", head[best]); printf "thread %s\nsyscall calls errors total-ms min-ms avg-ms max-ms stddev\n%s", head[best], body[best] }
          }' "$tmp/trace-$kind.txt" 2>/dev/null || true)
      fi
      if [[ -s $tmp/perf-$kind.data ]]; then
        perf_comm[$kind]=$(perf report -i "$tmp/perf-$kind.data" --stdio --no-children --sort comm -q 2>/dev/null |
          awk 'NF >= 2 && $1 ~ /%$/ { printf "%s %s\n", $1, $2 }' | head -n 8 || true)
        perf_dso[$kind]=$(perf report -i "$tmp/perf-$kind.data" --stdio --no-children --sort dso -q 2>/dev/null |
          awk 'NF >= 2 && $1 ~ /%$/ { printf "%s %s\n", $1, $2 }' | head -n 8 || true)
        perf_sym[$kind]=$(perf report -i "$tmp/perf-$kind.data" --stdio --no-children --sort dso,sym -q -g none 2>/dev/null |
          awk '$1 ~ /%$/ { pct = $1; $1 = ""; sub(/^ +/, ""); print pct " " $0 }' | head -n 20 || true)
        profiled+=("$kind")
      else
        say "perf recorded nothing: $(head -c 300 "$tmp/perf-record.err")"
      fi
    done
  else
    say "perf cannot record here: no profile"
  fi
fi

# ---- what the servers stored, and their logs ---------------------------------------------

inbound_total=$(ph_rows inbound_emails)
email_status=$(sqlite3 "$db" '.timeout 10000' \
  "SELECT status || ': ' || COUNT(*) FROM emails GROUP BY status ORDER BY status;" | paste -sd, - | sed 's/,/, /g')
held_at_end=$(held_sessions)
ph_warnings=$(grep -E ' (warning|error|critical) ' "$tmp/posthorn.log" || true)
ph_problem_count=$(grep -Ec ' (warning|error|critical) ' "$tmp/posthorn.log" || true)
pf_problem_lines=$(grep -E '(warning|error|fatal|panic):' "$pf_root/maillog" || true)
pf_problem_count=$(grep -Ec '(warning|error|fatal|panic):' "$pf_root/maillog" || true)
pf_holds=$(grep -c ': hold: ' "$pf_root/maillog" || true)
stop_servers
[[ $ph_exit == 0 ]] || problems+=("posthorn exited with status $ph_exit after SIGTERM")
((ph_problem_count == 0)) || problems+=("posthorn logged $ph_problem_count warning/error lines, the first: $(head -n 3 <<<"$ph_warnings" | tr '\n' ' ')")
((pf_problem_count == 0)) || problems+=("Postfix logged $pf_problem_count warning/error lines, the first: $(head -n 3 <<<"$pf_problem_lines" | tr '\n' ' ')")
for label in "${!first_errors[@]}"; do
  problems+=("$label: smtp-source printed: ${first_errors[$label]}")
done

# ---- report ------------------------------------------------------------------------

f3() { fmt '%.3f' "$1"; }
f2() { fmt '%.2f' "$1"; }
f1() { fmt '%.1f' "$1"; }
ratio() { fmt '%.3g' "$(calc "$1 / $2")"; } # 3 significant digits
thousands() { printf "%'d" "$1" 2>/dev/null || echo "$1"; }
kb() { if (($1 >= 1024 && $1 % 1024 == 0)); then echo "$(($1 / 1024)) KB"; else echo "$1 B"; fi; }
met() { if awk "BEGIN { exit !($1) }"; then echo "**met**"; else echo "**not met**"; fi; }
who_name() { if [[ $1 == postfix ]]; then echo Postfix; else echo posthorn; fi; }

if ((pf_sasl)); then
  pf_sub_desc="STARTTLS required (\`smtpd_tls_security_level = encrypt\`), then \`AUTH PLAIN\` through Cyrus SASL (sasldb auxprop; the API key as user name and password, realm \`$SASL_REALM\`; \`smtpd_tls_auth_only = yes\`), relaying for authenticated clients only (\`permit_sasl_authenticated, reject\`)"
else
  pf_sub_desc="STARTTLS required (\`smtpd_tls_security_level = encrypt\`) **but no AUTH** ($pf_sasl_note): Postfix's side does STARTTLS and no SASL exchange, and relays for 127.0.0.0/8 (\`permit_mynetworks\`)"
fi
if ((PIPELINING)); then pipe_desc="MAIL, RCPT and DATA sent in one write (PIPELINING)"; else pipe_desc="one command at a time, like smtp-source (no pipelining)"; fi

section="$tmp/section.md"
{
  echo "## SMTP acceptance (issue 6)"
  echo
  echo "Generated by \`bench/smtp_accept.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC')."
  echo
  echo "posthorn's two SMTP listeners next to Postfix's \`smtpd\`, in the same run, on loopback: messages"
  echo "accepted per second over $SESSIONS concurrent sessions, each session kept open for many transactions."
  echo "Both sides answer 250 only once the message is durably stored (posthorn: committed in SQLite with"
  echo "\`synchronous=FULL\`; Postfix: the queue file written and fsynced by \`cleanup\`), and neither delivers"
  echo "anything: acceptance alone is measured."
  echo
  echo "- Machine: $nproc_n CPUs, $cpu_model; $os_name, kernel $(uname -r); load average $load_at_start at the start."
  echo "  Servers and load share the same $nproc_n CPUs."
  if [[ ${#build_waits[@]} -gt 0 ]]; then
    echo "  Another engineer builds C++ on this machine: before each run the script waits until no \`cc1plus\` or \`ninja\`"
    echo "  runs (up to ${BUILD_WAIT}s). It had to wait: $(printf '%s; ' "${build_waits[@]}" | sed 's/; $//')."
  else
    echo "  Before each run the script checked that no \`cc1plus\` or \`ninja\` ran (C++ builds happen on this"
    echo "  machine); none did, no run had to wait."
  fi
  memory_line
  echo "- Software: posthorn $ph_commit (a copy of \`$PH_BIN\`, sha256 $ph_sha…), Postfix $pf_version (and its smtp-source),"
  echo "  OpenSSL $ossl_version, Python $py_version (the submission client), dnsmasq $dns_version."
  echo "- Postfix: a private instance (main.cf, master.cf, queue and log in a temporary directory), no chroot,"
  echo "  defaults otherwise, with two \`smtpd\` listeners on 127.0.0.1. Every accepted message is put on hold"
  echo "  (\`smtpd_data_restrictions = check_client_access static:HOLD\`): \`cleanup\` writes it into the hold queue,"
  echo "  which the queue manager never reads, so nothing is delivered (\`in_flow_delay = 0\`, as PEERS.md says for"
  echo "  acceptance alone). A message counts as stored when its file is in the hold queue after the run (also"
  echo "  checked with \`postqueue -j\`); the queue is emptied (\`postsuper -d ALL\`) before each run."
  echo "- posthorn: fresh data dir (SQLite, WAL, synchronous=FULL), the domain $DOMAIN VERIFIED against dnsmasq"
  echo "  with \`config.inbound\` true. Its delivery relay (\`POSTHORN_DELIVERY_RELAY\`) is neither a closed port nor"
  echo "  a sink but a loopback listener that takes connections and never answers (as in bench/send_emails.sh):"
  echo "  the delivery engine claims one batch, opens its sessions ($held_at_end at the end) and waits for a greeting"
  echo "  (\`POSTHORN_DELIVERY_COMMAND_TIMEOUT_S=3600\`), so nothing is delivered and delivery costs no CPU during"
  echo "  the runs. \`POSTHORN_LIMITS_SEND_RATE_PER_MINUTE=$SEND_RATE\` (the default, 1000 a minute, would refuse"
  echo "  most submissions with 451). Its certificate is the self-signed RSA-2048 pair it makes in its data dir;"
  echo "  Postfix's, one made with openssl the same way."
  echo "- **Inbound**: \`smtp-source -s $SESSIONS -d -m $MESSAGES -l <size> -f $IN_FROM -t $IN_TO 127.0.0.1:\$PORT\`"
  echo "  (Postfix's load generator; <size> bytes of body after its own few headers; no STARTTLS). posthorn: the"
  echo "  inbound listener, which parses each message (GMime) and stores it (\`inbound_emails\`, counted with sqlite3;"
  echo "  the first one stored was $in_raw bytes at 1 KB). Postfix: \`relay_domains = $DOMAIN\`,"
  echo "  \`smtpd_relay_restrictions = reject_unauth_destination\`, STARTTLS offered."
  echo "- **Submission**: smtp-source speaks neither STARTTLS nor AUTH, so the load is \`bench/smtp_load.py\`"
  echo "  (Python, a thread per session on blocking sockets, $CLIENT_PROCS process(es)): $SESSIONS sessions, each \`EHLO\`, \`STARTTLS\`, \`EHLO\`, \`AUTH PLAIN\` once,"
  echo "  then transactions, $pipe_desc, until $MESSAGES messages in all; each message has \`From: $SUB_HEADER_FROM\`,"
  echo "  \`To: <$SUB_TO>\`, a Subject, a Date, a unique Message-ID (posthorn's idempotency key) and <size> bytes of body."
  echo "  posthorn: the submission listener (\`POSTHORN_SMTP_ALLOW_AUTH_WITHOUT_TLS\` false, the default), the API key"
  echo "  as user name and password; each message becomes a QUEUED email (\`emails\`, counted with sqlite3; the first"
  echo "  one stored was $sub_raw bytes at 1 KB). Postfix: $pf_sub_desc."
  echo "- Each run: from the start of the load to its last answer. CPU = user+system time per message of all"
  echo "  the server's processes (Postfix: master and every daemon, those that ended included, through the master's"
  echo "  cutime/cstime); \"% CPU\" = that time over the run's wall time (100% = one of the $nproc_n CPUs)."
  echo "  Memory = peak over the run of the sum of RSS, and of PSS (shared pages divided among the processes that"
  echo "  share them), over the server's processes, sampled every $SAMPLE_MS ms. Load CPU = the load tool's own"
  echo "  user+system time (from wait4): near 100% of a CPU means the load, not the server, set the pace."
  echo "  noise = the machine's CPU steal / CPU used by processes other than the server and the load, in % of all"
  echo "  CPUs. $ROUNDS round(s) per size, the order of Postfix and posthorn rotating; after a check of one message of"
  echo "  each kind to each server and a warm-up of $WARMUP_MESSAGES messages of each kind to each."
  echo
  echo "Reproduce (as root, with the binary built): \`bench/smtp_accept.sh\` (\`MESSAGES=$MESSAGES ROUNDS=$ROUNDS SESSIONS=$SESSIONS SIZES=\"$SIZES\"\`"
  echo "are the defaults; \`PIPELINING\`, \`CLIENT_PROCS\`, \`PH_BIN\` in the environment), or \`bench/run.sh smtp_accept\`."
  echo
  echo "Medians over the rounds; ratio = posthorn msg/s / Postfix msg/s; the issue's goal: $GOAL×."
  echo
  echo "| side | size | server | msg/s | CPU-ms/msg | % CPU | peak RSS MiB | peak PSS MiB | load CPU-ms/msg (% CPU) | **posthorn / Postfix** | $GOAL× goal | ratio in each round |"
  echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|"
  for kind in inbound submission; do
    for size in $SIZES; do
      fr=$(field_median "$kind" postfix "$size" 1)
      pr=$(field_median "$kind" posthorn "$size" 1)
      for who in postfix posthorn; do
        v=$(field_median "$kind" "$who" "$size" 1)
        if [[ -z $v ]]; then
          echo "| $kind | $(kb "$size") | $(who_name "$who") | failed | | | | | | | | |"
          continue
        fi
        rs=""
        gs=""
        rr=""
        if [[ $who == posthorn && -n $fr && -n $pr ]]; then
          rs="**$(ratio "$pr" "$fr")×**"
          gs=$(met "$pr >= $GOAL * $fr")
          rr=$(round_ratios "$kind" "$size")
        fi
        echo "| $kind | $(kb "$size") | $(who_name "$who") | $(int "$v") | $(f3 "$(field_median "$kind" "$who" "$size" 3)") |" \
          "$(int "$(field_median "$kind" "$who" "$size" 9)")% | $(f1 "$(field_max "$kind" "$who" "$size" 4)") | $(f1 "$(field_max "$kind" "$who" "$size" 5)") |" \
          "$(f3 "$(field_median "$kind" "$who" "$size" 7)") ($(int "$(field_median "$kind" "$who" "$size" 8)")%) | $rs | $gs | $rr |"
      done
    done
  done
  echo
  echo "(Memory: the peak over the rounds. posthorn is one process serving both listeners; its peak resident"
  echo "memory over the whole run, VmHWM: $(f1 "$(calc "$ph_hwm / 1024")") MiB. Postfix's RSS sum counts the shared libraries once per"
  echo "process, hence PSS.)"
  echo
  echo "Every run (s = wall time; stored = messages the server had stored after the run; latency = the submission"
  echo "client's time from MAIL to the answer after the data, p50 / p99 in ms; fsyncs/msg = posthorn's fsync and"
  echo "fdatasync calls per message and pwrites/msg its pwrite64 calls per message (SQLite writes one page per"
  echo "call), counted by \`perf stat\` on the syscall tracepoints (? when perf could not); Postfix's \`cleanup\`"
  echo "fsyncs each queue file, (1) per message, not counted here):"
  echo
  echo "| side | size | round | server | msg/s | s | CPU-ms/msg | % CPU | RSS MiB | PSS MiB | processes | load CPU-ms/msg | load % CPU | latency p50 / p99 | stored | fsyncs/msg | pwrites/msg | noise |"
  echo "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for kind in inbound submission; do
    for size in $SIZES; do
      for ((r = 1; r <= ROUNDS; r++)); do
        for who in postfix posthorn; do
          v=${res[$kind,$who,$size,$r]:-}
          if [[ -z $v ]]; then
            echo "| $kind | $(kb "$size") | $r | $(who_name "$who") | failed | | | | | | | | | | | | | |"
            continue
          fi
          read -r a b c d e f g h i j k l m n o w <<<"$v"
          if [[ $k == - ]]; then lat="—"; else lat="$k / $l"; fi
          if [[ $who == postfix ]]; then fs="(1)"; elif [[ $o == - ]]; then fs="?"; else fs=$(f3 "$(calc "$o / $j")"); fi
          if [[ $who == postfix ]]; then pw="—"; elif [[ $w == - ]]; then pw="?"; else pw=$(f1 "$(calc "$w / $j")"); fi
          echo "| $kind | $(kb "$size") | $r | $(who_name "$who") | $(int "$a") | $(f2 "$b") | $(f3 "$c") | $(int "$i")% | $(f1 "$d") | $(f1 "$e") | $f | $(f3 "$g") | $(int "$h")% | $lat | $j | $fs | $pw | $m% / $n% |"
        done
      done
    done
  done
  echo
  echo "Reading (written by the script from the figures above):"
  echo
  for kind in inbound submission; do
    for size in $SIZES; do
      fr=$(field_median "$kind" postfix "$size" 1)
      pr=$(field_median "$kind" posthorn "$size" 1)
      if [[ -z $fr || -z $pr ]]; then
        echo "- $kind, $(kb "$size"): not measured (a run failed)."
        continue
      fi
      fc=$(field_median "$kind" postfix "$size" 3)
      pc=$(field_median "$kind" posthorn "$size" 3)
      fp=$(field_max "$kind" postfix "$size" 5)
      pp=$(field_max "$kind" posthorn "$size" 5)
      pu=$(field_median "$kind" posthorn "$size" 9)
      fu=$(field_median "$kind" postfix "$size" 9)
      echo "- $kind, $(kb "$size"): posthorn $(int "$pr") msg/s, Postfix $(int "$fr"): **$(ratio "$pr" "$fr")×** (goal $GOAL×: $(met "$pr >= $GOAL * $fr"));"
      echo "  CPU per message $(ratio "$pc" "$fc")× Postfix's ($(f3 "$pc") vs $(f3 "$fc") ms), peak PSS $(ratio "$pp" "$fp")× ($(f1 "$pp") vs $(f1 "$fp") MiB);"
      echo "  posthorn kept $(int "$pu")% of a CPU busy, Postfix's processes $(int "$fu")% (of $((100 * nproc_n))%)."
    done
  done
  busy=()
  for kind in inbound submission; do
    for size in $SIZES; do
      for who in postfix posthorn; do
        for ((r = 1; r <= ROUNDS; r++)); do
          v=${res[$kind,$who,$size,$r]:-}
          [[ -n $v ]] || continue
          h=$(awk '{ print $8 }' <<<"$v")
          if awk -v h="$h" 'BEGIN { exit !(h >= 85) }'; then busy+=("$kind-$who-$(kb "$size" | tr -d ' ')-r$r ($(int "$h")%)"); fi
        done
      done
    done
  done
  if [[ ${#busy[@]} -gt 0 ]]; then
    echo "- The load tool used 85% of a CPU or more in: $(printf '%s, ' "${busy[@]}" | sed 's/, $//'). There the load"
    echo "  (single-threaded) may have set the pace rather than the server; the CPU per message is the better"
    echo "  comparison for those runs."
  else
    echo "- The load tools stayed below 85% of a CPU in every run: they were not the limit (the server and the load"
    echo "  share $nproc_n CPUs, so each also slowed the other)."
  fi
  echo
  if [[ ${#noisy[@]} -gt 0 ]]; then
    echo "Disturbed runs (steal or other processes above $NOISY_PCT% of the machine): $(printf '%s; ' "${noisy[@]}" | sed 's/; $//')."
    echo
  fi
  for kind in "${profiled[@]}"; do
    v=${perf_res[$kind]:-}
    echo "Profile of posthorn during one more $kind run of $(thousands "$PROFILE_MESSAGES") messages of $(kb "${prof_size[$kind]}") (the size where its ratio"
    echo "was lowest; \`perf record -g -F 499 -p\`, self time, \`perf report --no-children\`), by thread (ph-io: the network"
    echo "threads, ph-writer: the one SQLite writer; \`posthorn\`: the pools of readers and blocking work), by object, and by symbol (the"
    if [[ -n $v ]]; then
      echo "first 20). That run: $(int "$(awk '{ print $1 }' <<<"$v")") msg/s under perf, $(f3 "$(awk '{ print $3 }' <<<"$v")") CPU-ms/msg, $(int "$(awk '{ print $9 }' <<<"$v")")% of a CPU."
    else
      echo "first 20)."
    fi
    echo
    echo '```'
    echo "${perf_comm[$kind]}"
    echo
    echo "${perf_dso[$kind]}"
    echo
    echo "${perf_sym[$kind]}"
    echo '```'
    echo
    if [[ -n ${perf_trace[$kind]:-} ]]; then
      v=${trace_res[$kind]:-}
      echo "The same run once more under \`perf trace -s -p\` (every system call traced, which slows the server${v:+: $(int "$(awk '{ print $1 }' <<<"$v")") msg/s}),"
      echo "for the thread of posthorn that made the most calls, the time spent in them:"
      echo
      echo '```'
      echo "${perf_trace[$kind]}"
      echo '```'
      echo
    fi
  done
  echo "After the runs: posthorn had $(thousands "$inbound_total") inbound emails and its emails by status were $email_status"
  echo "(checks, warm-ups and profile runs included; all QUEUED means nothing was delivered, as intended); Postfix's log has $pf_holds"
  echo "\`hold\` lines (checks and warm-ups included) and $pf_problem_count warning/error lines. Measured runs took ${t_measure}s in all."
  echo
  if [[ ${#problems[@]} -gt 0 ]]; then
    echo "**Problems observed in this run:**"
    echo
    for p in "${problems[@]}"; do echo "- $p"; done
  else
    echo "No problems observed: every run stored all its messages on both sides, every load ended without an"
    echo "error, no warnings in posthorn's log or Postfix's."
  fi
} >"$section"

echo
cat "$section"
echo

if [[ -n $RESULTS ]]; then
  begin='<!-- BEGIN smtp_accept: generated by bench/smtp_accept.sh, replaced on every run -->'
  end='<!-- END smtp_accept -->'
  if [[ -f $RESULTS ]] && grep -qxF "$begin" "$RESULTS"; then
    awk -v b="$begin" -v e="$end" -v f="$section" '
      $0 == b { print; while ((getline line < f) > 0) print line; skip = 1; next }
      $0 == e { skip = 0 }
      !skip { print }' "$RESULTS" >"$tmp/results.new"
  else
    {
      if [[ -f $RESULTS ]]; then
        cat "$RESULTS"
        echo
      else
        echo "# posthorn benchmark results"
        echo
      fi
      echo "$begin"
      cat "$section"
      echo "$end"
    } >"$tmp/results.new"
  fi
  cat "$tmp/results.new" >"$RESULTS"
  say "updated $RESULTS"
fi

if [[ ${#problems[@]} -gt 0 ]]; then
  say "problems:"
  for p in "${problems[@]}"; do say "  - $p"; done
  exit 1
fi
