# bench/lib.sh — the helpers the benchmark scripts share: process control, free ports,
# waiting for a server, CPU and noise accounting, the posthorn API, number formatting, and
# the servers of a benchmark (dnsmasq, the holding relay, posthorn, nginx, PostgreSQL).
# Sourced by each bench/*.sh after it has set its own globals (tmp, PY, DNSMASQ, PH_BIN,
# ph_pid, nginx_pid, dns_pid, ...) and its say(); nothing here runs on its own.
# shellcheck shell=bash
# The globals named above are the sourcing script's: set there, read here (and ph_exit set here).
# shellcheck disable=SC2154,SC2034

# Waits up to $2 seconds for process $1 to end.
wait_gone() {
  local pid=$1 i
  for ((i = 0; i < $2 * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  return 1
}

# Sends SIGTERM to process $2 (named $1 in messages) if it still runs, waits up to $3
# seconds for it to end, then kills it and any further PIDs given ($4...).
term_then_kill() {
  local name=$1 pid=$2 grace=$3
  shift 3
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  if ! wait_gone "$pid" "$grace"; then
    say "$name (pid $pid) did not stop within $grace s of SIGTERM: killing it"
    kill -KILL "$pid" "$@" 2>/dev/null || true
  fi
}

# The server lets the requests, SMTP transactions and delivery jobs in hand finish (within
# server.shutdown_grace_s, 30 s by default), then flushes the store; a delivery session still
# waiting for a silent relay's greeting holds no job, so it does not hold the stop up.
stop_posthorn() {
  [[ -n $ph_pid ]] || return 0
  stop_posthorn_pid "$ph_pid"
  ph_pid=
}

stop_nginx() {
  [[ -n $nginx_pid ]] || return 0
  local workers
  workers=$(pgrep -P "$nginx_pid" 2>/dev/null || true)
  # shellcheck disable=SC2086
  term_then_kill nginx "$nginx_pid" 10 $workers
  wait "$nginx_pid" 2>/dev/null || true
  nginx_pid=
}

stop_dnsmasq() {
  [[ -n $dns_pid ]] || return 0
  term_then_kill dnsmasq "$dns_pid" 10
  wait "$dns_pid" 2>/dev/null || true
  dns_pid=
}

# Postfix: `postfix stop` asks the master to stop; if it has not within 20 s, the master
# (known by its PID) is killed; its children notice that it is gone and exit.
stop_postfix() {
  [[ -n $pf_master ]] || return 0
  if kill -0 "$pf_master" 2>/dev/null; then
    postfix -c "$pf_conf" stop >/dev/null 2>&1 || kill -TERM "$pf_master" 2>/dev/null || true
    if ! wait_gone "$pf_master" 20; then
      say "Postfix's master (pid $pf_master) did not stop within 20 s: killing it"
      kill -KILL "$pf_master" 2>/dev/null || true
    fi
  fi
  pf_master=
}

# bounded SECONDS OUT ERR COMMAND...: runs the command with a time bound, its stdout to OUT
# and its stderr to ERR (files). In the background so that a signal to this script is
# handled at once (the EXIT trap then stops it); only the command's own output is
# redirected, so that what the traps print still reaches the terminal.
bounded() {
  local secs=$1 out=$2 err=$3 rc=0
  shift 3
  if [[ $out == "$err" ]]; then
    timeout --kill-after=5 "$secs" "$@" >"$out" 2>&1 &
  else
    timeout --kill-after=5 "$secs" "$@" >"$out" 2>"$err" &
  fi
  bg_pid=$!
  wait "$bg_pid" || rc=$?
  bg_pid=
  return "$rc"
}

# Sets REPLY to a port of 127.0.0.1 that nothing listens on and this script has not used
# (used_ports, the sourcing script's).
free_port() {
  local p i
  for ((i = 0; i < 200; i++)); do
    # Below Linux's ephemeral range (32768-60999): a port there may be a client's end of a
    # connection, or of one in TIME_WAIT, and nginx's bind() then failed now and then.
    p=$((20000 + RANDOM % 12000))
    [[ $used_ports == *" $p "* ]] && continue
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      used_ports+="$p "
      REPLY=$p
      return 0
    fi
  done
  die "no free port found on 127.0.0.1"
}

# Sets REPLY to a port of 127.0.0.1 free for both UDP and TCP (dnsmasq listens on both).
free_udp_port() {
  local i p
  for ((i = 0; i < 50; i++)); do
    p=$("$PY" -c '
import socket
with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
    u.bind(("127.0.0.1", 0))
    port = u.getsockname()[1]
    with socket.socket() as t:
        t.bind(("127.0.0.1", port))
        print(port)' 2>/dev/null || true)
    [[ -n $p && $used_ports != *" $p "* ]] || continue
    used_ports+="$p "
    REPLY=$p
    return 0
  done
  die "no free UDP+TCP port found on 127.0.0.1"
}

# wait_http PID SECONDS EXPECTED_STATUS CURL_ARGS...: polls until the answer has the status.
wait_http() {
  local pid=$1 secs=$2 want=$3 code i
  shift 3
  for ((i = 0; i < secs * 10; i++)); do
    kill -0 "$pid" 2>/dev/null || return 1
    code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$@" 2>/dev/null || true)
    [[ $code == "$want" ]] && return 0
    sleep 0.1
  done
  return 1
}

# jfield FILE KEY...: the value at that path of the JSON document in FILE (empty if absent).
jfield() {
  "$PY" -c '
import json, sys
try:
    v = json.load(open(sys.argv[1]))
    for k in sys.argv[2:]:
        v = v[int(k)] if isinstance(v, list) else v[k]
except Exception:
    sys.exit(0)
print(json.dumps(v) if isinstance(v, (dict, list)) else v)' "$@"
}

# api METHOD PATH OUT [JSON_BODY]: one request with the key; prints the status.
api() {
  local args=(-s -o "$3" -w '%{http_code}' --max-time 30 -X "$1" -H "$auth")
  [[ $# -lt 4 ]] || args+=(-H 'Content-Type: application/json' --data-binary "$4")
  curl "${args[@]}" "$base$2" || echo 000
}

start_dnsmasq() { # CONF
  local i
  "$DNSMASQ" --no-daemon --no-resolv --no-hosts --no-poll --port="$dns_port" \
    --listen-address=127.0.0.1 --bind-interfaces --conf-file="$1" --pid-file= \
    --user="$(id -un)" --group="$(id -gn)" --log-facility=- --local-ttl=0 \
    >/dev/null 2>>"$tmp/dns/dnsmasq.log" &
  dns_pid=$!
  for ((i = 0; i < 100; i++)); do
    kill -0 "$dns_pid" 2>/dev/null || {
      cat "$tmp/dns/dnsmasq.log" >&2
      die "dnsmasq exited at start"
    }
    (exec 3<>"/dev/tcp/127.0.0.1/$dns_port") 2>/dev/null && return 0
    sleep 0.1
  done
  die "dnsmasq did not listen on 127.0.0.1:$dns_port within 10 s"
}

# CPU time (user+system, clock ticks) of the given processes, threads included.
cpu_ticks() {
  local pid sum=0 t
  for pid in "$@"; do
    t=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$pid/stat" 2>/dev/null || echo 0)
    sum=$((sum + t))
  done
  echo "$sum"
}

# "total steal busy" ticks of the whole machine (busy: user, nice, system, irq, softirq).
machine_ticks() { awk '/^cpu / { print $2+$3+$4+$5+$6+$7+$8+$9, $9, $2+$3+$4+$7+$8; exit }' /proc/stat; }

# CPU time of this script's children that have ended (the runner and the load it ran).
child_ticks() { awk '{ sub(/^.*\) /, ""); print $14 + $15 }' "/proc/$$/stat"; }

# CPU ticks of a Postfix instance (tree_ticks of its master): the master's own and those of
# its children that have ended (every smtpd, smtp, cleanup... reaped by the master), plus
# the live children's own.
postfix_ticks() { tree_ticks "$pf_master"; }

# "steal_pct other_pct" between two machine_ticks samples, OWN ticks being the measured
# processes' (other: CPU used by every other process, in % of the machine).
noise_between() {
  awk -v a="$1" -v b="$2" -v own="$3" 'BEGIN {
    split(a, x, " "); split(b, y, " "); d = y[1] - x[1]
    if (d <= 0) { print "0.0 0.0"; exit }
    other = y[3] - x[3] - own
    printf "%.1f %.1f", 100 * (y[2] - x[2]) / d, (other > 0 ? 100 * other / d : 0) }'
}

# wait_quiet [SECONDS]: waits (at most SECONDS, default 60) until the machine is quiet, less
# than 5% of it busy over a second, so that a run does not share the machine with what the
# one before it left behind (a posthorn's background work on the emails it just took: the
# search indexer, a checkpoint). Says how long it waited when it did.
wait_quiet() {
  local limit=${1:-60} waited=0 a b
  while ((waited < limit)); do
    a=$(machine_ticks)
    sleep 1
    b=$(machine_ticks)
    if awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " "); d = y[1] - x[1]
        exit !(d > 0 && 100 * (y[3] - x[3]) / d < 5) }'; then
      ((waited == 0)) || say "  (waited ${waited}s for the machine to be quiet)"
      return 0
    fi
    waited=$((waited + 1))
  done
  say "  (the machine was not quiet after ${limit}s: the run goes on)"
}

note_noise() { # label steal other
  if awk -v a="$2" -v b="$3" -v t="$NOISY_PCT" 'BEGIN { exit !(a > t || b > t) }'; then
    noisy+=("$1 (steal $2%, other processes $3%)")
  fi
}

# Parses wrk --latency output: "req_per_s p50_ms p99_ms requests non_2xx socket_errors".
parse_wrk() {
  awk '
    function ms(v) {
      if (v ~ /us$/) return v / 1000
      if (v ~ /ms$/) return v + 0
      if (v ~ /[0-9]s$/) return v * 1000
      if (v ~ /m$/) return v * 60000
      if (v ~ /h$/) return v * 3600000
      return -1
    }
    /^ +50% / { p50 = ms($2) }
    /^ +99% / { p99 = ms($2) }
    / requests in / { reqs = $1 }
    /^Requests\/sec:/ { rps = $2 }
    /Non-2xx or 3xx responses:/ { non2xx = $NF }
    /Socket errors:/ { gsub(",", ""); sockerr = $4 + $6 + $8 + $10 }
    END {
      if (rps == "" || p50 == "" || p99 == "" || reqs == "") exit 1
      printf "%s %s %s %s %d %d\n", rps, p50, p99, reqs, non2xx, sockerr
    }' "$1"
}

account_posthorn() { # requests non2xx sockerr connections
  ph_requests=$((ph_requests + $1))
  ph_non2xx=$((ph_non2xx + $2))
  ph_sockerr=$((ph_sockerr + $3))
  ph_connections=$((ph_connections + $4))
}

# The commit of the tree that $PH_BIN was built in (git describe of the repository that holds
# it: another worktree's, when PH_BIN points there), "-dirty" if that tree has changes.
binary_commit() { git -C "$(dirname "$PH_BIN")" describe --always --dirty 2>/dev/null || echo unknown; }

calc() { awk "BEGIN { printf \"%.6f\", $* }"; }

fmt() { awk -v v="$2" "BEGIN { printf \"$1\", v }"; }

median() {
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 }
    END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

ms() { fmt '%.3f' "$1"; }

int() { fmt '%.0f' "$1"; }

die() {
  say "error: $*"
  exit "${2:-1}"
}

# Writes once to (nearly) all of the machine's free memory, then frees it; sets TOUCHED_GIB
# and TOUCHED_S (what it wrote, and how long it took), for memory_line. On these machines
# (Firecracker VMs) the host backs a guest's memory lazily: the first write to a page the
# guest has never used costs a fault in the host, ~10 µs, where a recycled page costs
# nothing. A server that stores data grows the page cache into such pages (posthorn's
# database: ~2 KB a send, a new page every other send), and on a fresh VM pays for it;
# after this, as on any machine that has been up for a while, it does not (thirteenth
# session: a 2.5 GB database on a fresh VM, 26.5k sends/s, the checkpointer ~60% of its
# time in that copy; after touching the free memory, 27.4k and the cost gone;
# bench/RESULTS.md, send_emails' notes). Leaves 1 GiB free, so that nothing is evicted, and
# writes at most 32 GiB (1-2.5 s a GiB here: the host takes back some of what a guest
# frees, so a page written once may fault again later). TOUCH_MEMORY=0 in the environment
# skips it: for a smoke test, or a script run by another that has done it (bench/pg.sh).
touch_free_memory() {
  local start
  if [[ ${TOUCH_MEMORY:-1} == 0 ]]; then
    TOUCHED_GIB=
    TOUCHED_S=
    say "TOUCH_MEMORY=0: the free memory is not written first"
    return 0
  fi
  say "writing once to the machine's free memory (touch_free_memory in bench/lib.sh)"
  start=$(date +%s.%N)
  TOUCHED_GIB=$("$PY" - <<'PY'
import mmap
free_kb = 0
for line in open("/proc/meminfo"):
    if line.startswith("MemFree:"):
        free_kb = int(line.split()[1])
size = min(max(0, free_kb * 1024 - 2**30), 32 * 2**30) // mmap.PAGESIZE * mmap.PAGESIZE
if size > 0:
    m = mmap.mmap(-1, size)
    chunk = b"\1" * (256 * mmap.PAGESIZE)
    for off in range(0, size - len(chunk) + 1, len(chunk)):
        m[off:off + len(chunk)] = chunk
    m.close()
print(f"{size / 2**30:.1f}")
PY
  ) || TOUCHED_GIB=0
  TOUCHED_S=$(fmt '%.0f' "$(calc "$(date +%s.%N) - $start")")
  say "touched $TOUCHED_GIB GiB in $TOUCHED_S s"
}

# The results section's line on what touch_free_memory did.
memory_line() {
  if [[ -z $TOUCHED_GIB ]]; then
    echo "- Memory: the free memory was not written first in this script (\`TOUCH_MEMORY=0\`: a smoke test, or a"
    echo "  script run by another that did it, such as bench/pg.sh)."
    return 0
  fi
  echo "- Memory: before the runs, $TOUCHED_GIB GiB of free memory written once and freed ($TOUCHED_S s), so that the"
  echo "  page cache that a growing database or queue fills is memory the VM's host already backs (\`touch_free_memory\`, bench/lib.sh)."
}

# ---- the servers of a benchmark: dnsmasq, the holding relay, posthorn, nginx, PostgreSQL ----

# dnsmasq on a free port of 127.0.0.1 (UDP and TCP), authoritative (--local) for the test
# names and answering nothing else (sets dns_port, dns_version). The records of a domain are
# added once posthorn has made them, by a restart on the same port (ph_verify_domain).
start_dnsmasq_base() {
  free_udp_port
  dns_port=$REPLY
  mkdir -p "$tmp/dns"
  printf 'local=/%s/\n' test example example.com example.net example.org >"$tmp/dns/base.conf"
  start_dnsmasq "$tmp/dns/base.conf"
  dns_version=$("$DNSMASQ" --version 2>/dev/null | awk 'NR == 1 { print $3 }')
  say "dnsmasq $dns_version: pid $dns_pid on 127.0.0.1:$dns_port"
}

# The delivery relay that holds the delivery engine (hold_port, hold_pid; held_sessions
# counts its connections): it listens (the kernel completes the connections) and never
# accepts nor answers.
start_hold_relay() {
  local i
  free_port
  hold_port=$REPLY
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
  grep -q listening "$tmp/hold.txt" 2>/dev/null || {
    cat "$tmp/hold.txt" >&2
    die "the delivery relay listener did not start on 127.0.0.1:$hold_port"
  }
}

# Connections established to the holding relay, that is delivery sessions waiting for a greeting.
held_sessions() {
  if command -v ss >/dev/null 2>&1; then
    ss -Htn state established "( sport = :$hold_port )" 2>/dev/null | wc -l
  else
    echo "?"
  fi
}

stop_hold() {
  [[ -n ${hold_pid:-} ]] || return 0
  kill -TERM "$hold_pid" 2>/dev/null || true
  if ! wait_gone "$hold_pid" 10; then kill -KILL "$hold_pid" 2>/dev/null || true; fi
  wait "$hold_pid" 2>/dev/null || true
  hold_pid=
}

# ph_prepare [NAME]: the ports, data dir, log and environment of one posthorn (a second one
# in the same run has a NAME: data dir $tmp/data-NAME, log $tmp/posthorn-NAME.log). Sets
# ph_port, ph_data, ph_log, ph_env, base, ph_url, db (the SQLite file, or the PostgreSQL URL
# when ph_extra_env sets POSTHORN_DATABASE_URL) and ph_store (sqlite or pg). Delivery goes to
# PH_RELAY (HOST:PORT) if set, else to the holding relay (started if need be), with connect
# and command timeouts of an hour so that the engine waits there for the whole run. The
# sourcing script's ph_extra_env (an array of VAR=value) comes last and wins.
ph_prepare() {
  local name=${1:-} relay=${PH_RELAY:-} v
  free_port
  ph_port=$REPLY
  free_port
  ph_smtp_sub=$REPLY
  free_port
  ph_smtp_in=$REPLY
  ph_data="$tmp/data${name:+-$name}"
  ph_log="$tmp/posthorn${name:+-$name}.log"
  if [[ -z $relay ]]; then
    [[ -n ${hold_pid:-} ]] || start_hold_relay
    relay="127.0.0.1:$hold_port"
  fi
  ph_env=(
    "POSTHORN_SERVER_DATA_DIR=$ph_data"
    "POSTHORN_HTTP_LISTEN=127.0.0.1:$ph_port"
    "POSTHORN_SMTP_SUBMISSION_LISTEN=127.0.0.1:$ph_smtp_sub"
    "POSTHORN_SMTP_INBOUND_LISTEN=127.0.0.1:$ph_smtp_in"
    "POSTHORN_DNS_SERVERS=127.0.0.1:$dns_port"
    "POSTHORN_DNS_DKIM_ZONE=$DKIM_ZONE"
    "POSTHORN_DNS_SPF_INCLUDE=$SPF_INCLUDE"
    "POSTHORN_DNS_INBOUND_MX=$INBOUND_MX"
    "POSTHORN_LIMITS_SEND_RATE_PER_MINUTE=$SEND_RATE"
    "POSTHORN_DELIVERY_RELAY=$relay"
    "POSTHORN_DELIVERY_TLS=off"
  )
  [[ -n ${PH_RELAY:-} ]] || ph_env+=(
    "POSTHORN_DELIVERY_CONNECT_TIMEOUT_S=3600"
    "POSTHORN_DELIVERY_COMMAND_TIMEOUT_S=3600"
  )
  ph_env+=(${ph_extra_env[@]+"${ph_extra_env[@]}"})
  mkdir -p "$ph_data"
  db="$ph_data/posthorn.db"
  ph_store=sqlite
  for v in "${ph_env[@]}"; do
    if [[ $v == POSTHORN_DATABASE_URL=* ]]; then
      db=${v#POSTHORN_DATABASE_URL=}
      ph_store=pg
    fi
  done
  base="http://127.0.0.1:$ph_port"
  ph_url="$base/v1/emails"
}

# ph_create_key: an account and an API key made with the CLI on ph_prepare's store (key, auth).
ph_create_key() {
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
}

# ph_serve: starts `posthorn serve` as ph_prepare made it (ph_pid), its output to ph_log, and
# waits until it answers 200 on /v1/domains with the key ($auth).
ph_serve() {
  env "${ph_env[@]}" "$tmp/posthorn" serve >>"$ph_log" 2>&1 &
  ph_pid=$!
  if ! wait_http "$ph_pid" 20 200 -H "$auth" "$base/v1/domains"; then
    tail -n 30 "$ph_log" >&2 || true
    die "posthorn did not answer 200 on $base/v1/domains within 20 s"
  fi
  if [[ $ph_store == sqlite && ! -f $db ]]; then
    die "no database at $db (has the default data dir layout changed?)"
  fi
  if [[ $ph_store == pg ]]; then
    say "posthorn $ph_commit: pid $ph_pid on 127.0.0.1:$ph_port, data dir $ph_data, database $(pg_redact "$db")"
  else
    say "posthorn $ph_commit: pid $ph_pid on 127.0.0.1:$ph_port, data dir $ph_data"
  fi
}

# ph_verify_domain: adds $DOMAIN to the posthorn at $base, publishes its records in dnsmasq
# (a restart on the same port, with the base names and these records only) and verifies it.
ph_verify_domain() {
  local code status
  code=$(api POST /v1/domains "$tmp/domain.json" "{\"domain\":\"$DOMAIN\"}")
  [[ $code == 201 ]] || die "POST /v1/domains answered $code: $(head -c 500 "$tmp/domain.json")"
  bounded 60 "$tmp/zone.txt" "$tmp/zone.err" env "${ph_env[@]}" "$tmp/posthorn" dns zone || {
    cat "$tmp/zone.txt" "$tmp/zone.err" >&2
    die "posthorn dns zone failed"
  }
  # The records as a user and an operator would publish them: the DKIM CNAMEs and, for each
  # target, the TXT that `posthorn dns zone` prints (a dnsmasq cname target must be a name
  # dnsmasq knows: hence the host-record), SPF, DMARC and MX.
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
  stop_dnsmasq
  start_dnsmasq "$tmp/dns/domain.conf"
  code=$(api POST "/v1/domains/$DOMAIN/verify" "$tmp/verify.json")
  status=$(jfield "$tmp/verify.json" status)
  if [[ $code != 200 || $status != VERIFIED ]]; then
    cat "$tmp/dns/domain.conf" >&2
    die "POST /v1/domains/$DOMAIN/verify answered $code, status '${status:-?}': $(head -c 1500 "$tmp/verify.json")"
  fi
  say "domain $DOMAIN: VERIFIED against dnsmasq"
}

# start_posthorn_with_verified_domain [NAME]: the posthorn of a benchmark, set up as
# bench/send_emails.sh describes: dnsmasq (started if it does not run yet), a fresh data dir
# (ph_prepare: delivery held by the holding relay unless PH_RELAY is set), an account and an
# API key (key, auth), `posthorn serve` (ph_pid), and the domain $DOMAIN verified against
# dnsmasq. Uses the sourcing script's globals (tmp, PY, DNSMASQ, DKIM_ZONE, SPF_INCLUDE,
# INBOUND_MX, SEND_RATE, DOMAIN, ph_commit, and ph_extra_env if set). A second posthorn of
# the same run has its own NAME; dnsmasq then publishes that one's records only, which is
# enough: a domain is verified once, and checked again only after dns.verified_recheck_s
# (a day).
# shellcheck disable=SC2120 # NAME is optional
start_posthorn_with_verified_domain() {
  [[ -n ${dns_pid:-} ]] || start_dnsmasq_base
  ph_prepare "${1:-}"
  ph_create_key
  ph_serve
  ph_verify_domain
}

stop_posthorn_pid() { # PID: stops that posthorn as stop_posthorn does; sets ph_exit
  local pid=$1
  ph_exit=
  [[ -n $pid ]] || return 0
  term_then_kill posthorn "$pid" 45
  ph_exit=0
  wait "$pid" 2>/dev/null || ph_exit=$?
}

# write_send_body PATH SIZE SUBJECT: a send as JSON, {"from","to","subject","text"} from $FROM
# to $TO with exactly SIZE bytes of plain text (lines of at most 72 characters).
write_send_body() {
  "$PY" - "$1" "$2" "$FROM" "$TO" "$3" <<'PY'
import json, sys
path, size, sender, to, subject = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
words = ("The quick brown fox jumps over the lazy dog. Pack my box with five dozen "
         "liquor jugs. How vexingly quick daft zebras jump! ").split()
parts, line, n, i = [], "", 0, 0
while n + len(line) < size:
    w = words[i % len(words)]
    i += 1
    if line and len(line) + 1 + len(w) > 72:
        parts.append(line + "\n")
        n += len(line) + 1
        line = w
    else:
        line = (line + " " + w) if line else w
text = ("".join(parts) + line)[:size - 1].rstrip() + "\n"
text = text + "x" * (size - len(text.encode()))  # exactly `size` bytes
body = {"from": sender, "to": to, "subject": subject, "text": text}
with open(path, "w") as f:
    f.write(json.dumps(body, separators=(",", ":")))
PY
}

# write_post_lua BODY OUT: a wrk script whose every request is a POST of the file BODY as JSON.
write_post_lua() {
  grep -q ']==]' "$1" && die "the body contains the Lua string delimiter"
  {
    echo 'wrk.method = "POST"'
    echo 'wrk.headers["Content-Type"] = "application/json"'
    printf 'wrk.body = [==[%s]==]\n' "$(cat "$1")"
  } >"$2"
}

# start_nginx_post BODY: nginx with a private configuration in $tmp/nginx (never the system
# one), `worker_processes 2`, no access log, unlimited keep-alive, answering a POST to /post
# with 204 once it has read the body, and a GET of /204 with 204; waits until it answers the
# POST of the file BODY.
# Sets nginx_port, nginx_pid, nginx_url, nginx_version.
start_nginx_post() {
  free_port
  nginx_port=$REPLY
  nginx_version=$(nginx -v 2>&1 | sed 's/^nginx version: //; s/^nginx\///')
  mkdir -p "$tmp/nginx/logs"
  cat >"$tmp/nginx/nginx.conf" <<CONF
# Private configuration of a benchmark under bench/ (prefix $tmp/nginx).
daemon off;
master_process on;
worker_processes 2;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/logs/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    # posthorn keeps a connection open for any number of requests; so does nginx here.
    keepalive_requests 1000000;
    client_body_temp_path $tmp/nginx/client_body;
    proxy_temp_path $tmp/nginx/proxy;
    fastcgi_temp_path $tmp/nginx/fastcgi;
    uwsgi_temp_path $tmp/nginx/uwsgi;
    scgi_temp_path $tmp/nginx/scgi;
    server {
        listen 127.0.0.1:$nginx_port;
        location = /204 {
            if (\$request_method != GET) { return 405; }
            return 204;
        }
        location = /post {
            # The body is read (and discarded) before the answer, so keep-alive goes on.
            client_max_body_size 64k;
            client_body_buffer_size 16k;
            if (\$request_method != POST) { return 405; }
            return 204;
        }
        location / { return 404; }
    }
}
CONF
  if ! nginx -t -q -e "$tmp/nginx/logs/error.log" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" 2>"$tmp/nginx-t.txt"; then
    cat "$tmp/nginx-t.txt" "$tmp/nginx/logs/error.log" >&2 2>/dev/null || true
    die "nginx rejects the benchmark configuration"
  fi
  nginx -e "$tmp/nginx/logs/error.log" -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" >"$tmp/nginx.out" 2>&1 &
  nginx_pid=$!
  nginx_url="http://127.0.0.1:$nginx_port/post"
  if ! wait_http "$nginx_pid" 10 204 -H 'Content-Type: application/json' --data-binary @"$1" "$nginx_url"; then
    cat "$tmp/nginx.out" "$tmp/nginx/logs/error.log" >&2 2>/dev/null || true
    die "nginx did not answer 204 to a POST of the body on $nginx_url within 10 s"
  fi
  say "nginx $nginx_version: pid $nginx_pid on 127.0.0.1:$nginx_port"
}

# ---- PostgreSQL ----------------------------------------------------------------------

# start_pg: a durable PostgreSQL server of its own (tools/pg_test_server.py with
# PH_PG_DURABLE=1: fsync, synchronous_commit and full_page_writes on, PostgreSQL's defaults
# otherwise) on a free port of 127.0.0.1; as root it runs as nobody. Sets pg_admin_url (the
# database postgres as the superuser postgres), pg_pid (its postmaster), pg_version and
# pg_dir (its data). Stopped by stop_pg.
start_pg() {
  mkdir -p "$tmp/pg"
  if ! PH_PG_DURABLE=1 bounded 120 "$tmp/pg/start.txt" "$tmp/pg/start.txt" "$PY" tools/pg_test_server.py start "$tmp/pg"; then
    cat "$tmp/pg/start.txt" >&2
    die "tools/pg_test_server.py could not start PostgreSQL"
  fi
  pg_admin_url=$(head -n1 "$tmp/pg/url")
  pg_pid=$(head -n1 "$tmp/pg/pid")
  pg_dir=$(head -n1 "$tmp/pg/dir")
  pg_version=$(psql -XAtq "$pg_admin_url" -c 'SHOW server_version' 2>/dev/null | awk '{ print $1 }')
  [[ -n $pg_version ]] || die "psql cannot reach the PostgreSQL server at $pg_admin_url"
  say "PostgreSQL $pg_version (durable): postmaster pid $pg_pid, $pg_admin_url, data in $pg_dir"
}

stop_pg() {
  [[ -n ${pg_pid:-} ]] || return 0
  "$PY" tools/pg_test_server.py stop "$tmp/pg" >/dev/null 2>&1 || kill -KILL "$pg_pid" 2>/dev/null || true
  pg_pid=
}

# pg_url_of NAME: the URL of the database NAME on the server of pg_admin_url.
pg_url_of() { echo "${pg_admin_url%/*}/$1"; }

# pg_create_db NAME: a new, empty database NAME (owned by postgres, the user posthorn connects
# as, so that it can create its tables and the pg_trgm extension); prints its URL.
pg_create_db() {
  psql -XAtq -v ON_ERROR_STOP=1 "$pg_admin_url" -c "CREATE DATABASE $1" >/dev/null ||
    die "cannot create the database $1"
  pg_url_of "$1"
}

# pg_settings: the server's durability and memory settings, as "name=value, ...".
pg_settings() {
  psql -XAtq -F= "$pg_admin_url" -c "SELECT name, setting || coalesce(unit, '') FROM pg_settings
    WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method',
                   'shared_buffers', 'max_wal_size', 'checkpoint_timeout', 'max_connections')
    ORDER BY name" | paste -sd, - | sed 's/,/, /g'
}

# pg_redact URL: the URL without its password.
pg_redact() { sed -E 's#(://[^:/@]+):[^@]*@#\1:***@#' <<<"$1"; }

# store_sql DB SQL: runs SQL on the store DB (a SQLite file, or a PostgreSQL URL) and prints
# the rows, fields separated by a space.
store_sql() {
  if [[ $1 == postgres://* || $1 == postgresql://* ]]; then
    psql -XAtq -F' ' -v ON_ERROR_STOP=1 "$1" -c "$2"
  else
    sqlite3 -separator ' ' "$1" '.timeout 10000' "$2"
  fi
}

# tree_ticks PID: CPU ticks of a process and its children: its own, those of its children
# that have ended (cutime, cstime) and the live children's own (Postfix's master with its
# daemons, PostgreSQL's postmaster with its backends).
tree_ticks() {
  local sum pid
  sum=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0)
  for pid in $(pgrep -P "$1" 2>/dev/null || true); do
    sum=$((sum + $(cpu_ticks "$pid")))
  done
  echo "$sum"
}


# write_results_section NAME FILE: replaces the section NAME of $RESULTS (between its BEGIN
# and END markers) with FILE, or adds it at the end (starting the file if there is none).
write_results_section() {
  local name=$1 section=$2
  local begin="<!-- BEGIN $name: generated by bench/$name.sh, replaced on every run -->"
  local end="<!-- END $name -->"
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
        echo "Written by the scripts under bench/ (\`make bench\`). Figures are comparable only"
        echo "within the same run: each benchmark measures a peer side by side with posthorn."
        echo
      fi
      echo "$begin"
      cat "$section"
      echo "$end"
    } >"$tmp/results.new"
  fi
  cat "$tmp/results.new" >"$RESULTS"
  say "updated $RESULTS"
}
