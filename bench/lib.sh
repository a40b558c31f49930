# bench/lib.sh — the helpers the benchmark scripts share: process control, free ports,
# waiting for a server, CPU and noise accounting, the posthorn API, and number formatting.
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

stop_posthorn() {
  [[ -n $ph_pid ]] || return 0
  # The server lets the requests, sessions and delivery jobs in hand finish (30 s grace),
  # then flushes the store; delivery sessions held by a silent relay take that whole grace.
  term_then_kill posthorn "$ph_pid" 45
  ph_exit=0
  wait "$ph_pid" 2>/dev/null || ph_exit=$?
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

# CPU ticks of a Postfix instance: the master's own and those of its children that have
# ended (cutime, cstime: every smtpd, smtp, cleanup... reaped by the master), plus the
# live children's own.
postfix_ticks() {
  local sum pid
  sum=$(awk '{ sub(/^.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$pf_master/stat" 2>/dev/null || echo 0)
  for pid in $(pgrep -P "$pf_master" 2>/dev/null || true); do
    sum=$((sum + $(cpu_ticks "$pid")))
  done
  echo "$sum"
}

# "steal_pct other_pct" between two machine_ticks samples, OWN ticks being the measured
# processes' (other: CPU used by every other process, in % of the machine).
noise_between() {
  awk -v a="$1" -v b="$2" -v own="$3" 'BEGIN {
    split(a, x, " "); split(b, y, " "); d = y[1] - x[1]
    if (d <= 0) { print "0.0 0.0"; exit }
    other = y[3] - x[3] - own
    printf "%.1f %.1f", 100 * (y[2] - x[2]) / d, (other > 0 ? 100 * other / d : 0) }'
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
# frees, so a page written once may fault again later).
touch_free_memory() {
  local start
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
  echo "- Memory: before the runs, $TOUCHED_GIB GiB of free memory written once and freed ($TOUCHED_S s), so that the"
  echo "  page cache that a growing database or queue fills is memory the VM's host already backs (\`touch_free_memory\`, bench/lib.sh)."
}

# The posthorn of a benchmark, set up as bench/send_emails.sh describes: dnsmasq (sets
# dns_port, dns_version), a delivery relay that listens and never answers, which holds the
# delivery engine (hold_port, hold_pid; held_sessions counts its connections), posthorn on a
# fresh data dir with an account and an API key (ph_env, ph_port, ph_pid, key, auth, base,
# ph_url, db), and the domain $DOMAIN verified against dnsmasq. Uses the sourcing script's
# globals (tmp, PY, DNSMASQ, DKIM_ZONE, SPF_INCLUDE, INBOUND_MX, SEND_RATE, ph_commit) and
# its helpers (start_dnsmasq, wait_http, api).
start_posthorn_with_verified_domain() {
  free_udp_port
  dns_port=$REPLY
  mkdir -p "$tmp/dns"
  printf 'local=/%s/\n' test example example.com example.net example.org >"$tmp/dns/base.conf"
  start_dnsmasq "$tmp/dns/base.conf"
  dns_version=$("$DNSMASQ" --version 2>/dev/null | awk 'NR == 1 { print $3 }')
  say "dnsmasq $dns_version: pid $dns_pid on 127.0.0.1:$dns_port"

  # The delivery relay that holds the delivery engine: it listens (the kernel completes the
  # connections) and never accepts nor answers.
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
  # Connections established to the listener, that is delivery sessions waiting for a greeting.
  # shellcheck disable=SC2317  # defined here, called by the sourcing script
  held_sessions() {
    if command -v ss >/dev/null 2>&1; then
      ss -Htn state established "( sport = :$hold_port )" 2>/dev/null | wc -l
    else
      echo "?"
    fi
  }

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
  ph_url="$base/v1/emails"

  env "${ph_env[@]}" "$tmp/posthorn" serve >"$tmp/posthorn.log" 2>&1 &
  ph_pid=$!
  if ! wait_http "$ph_pid" 20 200 -H "$auth" "$base/v1/domains"; then
    tail -n 30 "$tmp/posthorn.log" >&2 || true
    die "posthorn did not answer 200 on $base/v1/domains within 20 s"
  fi
  [[ -f $db ]] || die "no database at $db (has the default data dir layout changed?)"
  say "posthorn $ph_commit: pid $ph_pid on 127.0.0.1:$ph_port, data dir $tmp/data"

  # The sending domain, verified against dnsmasq.
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
