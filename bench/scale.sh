#!/usr/bin/env bash
# Benchmark (issue 25, item 8): posthorn at scale. Fills a fresh store with $EMAILS emails
# (1,000,000 by default) through the real API, `POST /v1/emails`, as fast as the server
# takes them, then measures what a store that size costs: the send rate as it grows, the
# server's memory, the store's size on disk, the restart time, and the latency of the reads
# (one email, the request log, the email list with deep pages, searches and a date range,
# the envelope list).
#
# What one run does:
#   1. starts dnsmasq (a real DNS server) and posthorn on a fresh temporary data dir, each on
#      a free port of 127.0.0.1, with one account, one API key and the domain
#      mail.example.com verified against dnsmasq (its DKIM CNAMEs and the TXT they point to,
#      SPF, DMARC and MX published there), `limits.send_rate_per_minute` at its maximum
#      (100000000), and delivery kept from sending as bench/send_emails.sh does: its relay
#      (delivery.relay) is a loopback listener that takes connections and never answers, so
#      the engine claims its first batch and waits for a greeting (command_timeout_s = 3600)
#      instead of signing and sending; one send with curl checks that an email is QUEUED;
#   2. writes once to the machine's free memory (touch_free_memory in bench/lib.sh;
#      TOUCH_MEMORY=0 skips it), then fills the store in chunks of $CHUNK sends, each a run
#      of `wrk -t$THREADS -c$CONNECTIONS` with fill.lua: send k (0 <= k < $EMAILS) goes to
#      user<k>@example<k mod 1000>.net (so that a search by that address finds one email),
#      with the subject "<A> <B> #<k>", A the (k mod 8)-th of 8 words (Invoice, Receipt, ...:
#      the search word "invoice" finds exactly ceil(N/8) emails) and B one of 5 more, a cc
#      copy<k>@example<k mod 1000>.org when k is a multiple of 4, and $TEXT_BYTES bytes of
#      text. Each wrk thread sends its share of the chunk exactly once and counts the
#      answers itself; once all its sends are answered it writes a file and stops (wrk's main
#      thread sleeps for -d whatever its threads do, so the script then ends wrk with
#      SIGINT). Between its last send and its last answer a thread's idle connections ask
#      `GET /healthz` (not logged, writes nothing) instead. For each chunk: sends/s (from the
#      thread's first request to its last answer, clock_gettime in LuaJIT), wrk's p50/p99,
#      server CPU per send, noise, and after it the server's VmRSS (RssAnon + RssFile, from
#      /proc/<pid>/status) and the database + WAL size;
#   3. at N: the data dir's files and sizes with the server running, then SIGTERM (the time
#      it takes to stop is reported too), the stored rows counted with sqlite3 (every 200 must be one
#      email, with one envelope, one body and its recipients; the request log must hold one
#      200 per email), the sizes after the stop, and a random sample of the email ids;
#   4. the restart: a Python poller already asking `GET /healthz` every 5 ms, the server is
#      started again on the same data dir and the time from the exec to the first 200 is
#      the restart time (the page cache is warm: the files were just written);
#   5. the latency of each read (see "Why a sequential client" below), every answer's status
#      checked (anything but 200 is a failure) and each list's `total` checked against what
#      the fill put in the store;
#   6. stops posthorn (SIGTERM), prints a markdown section and replaces the scale section
#      of $RESULTS.
#
# Why a sequential client for the latencies, and not wrk -c4: the goal is the latency of
# one request against a large store, not under load. wrk's closed loop with 4 connections
# queues each request behind the other three on 2 CPUs that wrk shares, so its p50 is a
# multiple of the service time; it takes ~40,000 samples of a 0.5 ms read and a few
# hundred of a scan in the same 10 s, so its p99s are not comparable; each of those
# requests adds a request-log row, so the store grows while it is measured; and it checks
# neither bodies nor totals (only non-2xx). The Python client (http.client, one keep-alive
# connection) sends one request at a time and times it from the request to the last byte
# of the answer: the same number of samples for every read ($LAT_REQUESTS, unless a read is
# so slow that $LAT_SECONDS pass first: then at least $LAT_MIN), taken round-robin in turns
# of at most $LAT_BLOCK requests or 1 s per read, so that a stall of this shared machine
# spreads over all the reads rather than landing on one; p99 is the nearest-rank 99th
# percentile (the 10th slowest of 1000). Its own cost is shown by a `GET /healthz` row (no
# key, no store): ~0.1 ms. Measured side by side on a 50,000-email store (3 rounds, the
# machine busy with others' builds): `GET /v1/email?limit=100` sequentially p50 9.4-10.9 ms,
# p99 22-41 ms; with wrk -t2 -c4 -d10s p50 22-56 ms, p99 89-138 ms (711-1453 samples);
# `GET /v1/logs?limit=100` sequentially p50 0.43-0.55 ms, p99 6.4-9.2 ms; wrk p50
# 0.71-1.0 ms, p99 5.6-11 ms.
#
# Duration of a run at the default 1,000,000 emails on a 2-CPU VM like this one, estimated
# from a run of 50,000 (chunks of 10,000; the whole run 255 s) on a machine busy with
# others' builds (load 5-15; other processes took ~75% of the CPUs): ~7 minutes when the
# machine is quiet, up to ~20 when it is that busy:
#   - touching the free memory: 20-50 s (1-2.5 s a GiB; TOUCH_MEMORY=0 skips it);
#   - the fill: ~50 s at the ~20k sends/s a quiet machine takes (send_emails measured 25-33k
#     with a fixed body); the busy 50k run went at 1.5-2.9k sends/s, which would be 6-11 min;
#   - the two SIGTERMs took 0.4 s each at 50k; the sqlite3 counts and the random ids a few s;
#   - the reads, ~4-5 min: at 50k the scans took (p50) 11 ms (the list, which counts its
#     total), 25 ms (the deep pages), 42 ms (the date range), 64 ms (the envelope search),
#     113 ms (the subject search) and 215 ms (the recipient search); ~20x that at 1M, so each
#     of these reads runs its $LAT_SECONDS s, or 20 requests when they take longer (the
#     recipient search: 20 x ~4 s); the three fast reads finish 1000 requests in seconds.
# Disk: ~2.2 KB a send at 50k after the stop (email, envelope, recipients, MIME body, request
# log and their indexes; the WAL another ~30% while running), so ~2.2 GB at 1M; the script
# checks that the data dir's file system has room for 3x 2.5 KB a send.
#
# Options (environment): EMAILS=1000000 CHUNK=100000 (EMAILS must be a multiple of CHUNK)
#   THREADS=2 CONNECTIONS=64 (the fill's wrk) TEXT_BYTES=1024 (each email's text)
#   LAT_REQUESTS=1000 LAT_SECONDS=30 LAT_MIN=20 LAT_WARMUP=5 LAT_BLOCK=50 (the reads)
#   DEEP_PAGE (the page of the deep-page reads, limit 100; default EMAILS/200, the middle
#   of the store: 5000 at 1M) TOUCH_MEMORY=1 PH_BIN=build/posthorn NOISY_PCT=10
#   RESULTS=bench/RESULTS.md (empty: print the section, do not write it) KEEP_TMP=1.
# Inherited POSTHORN_* variables are ignored so that a run does not depend on them.
# Exit status: 0 ok; 1 posthorn misbehaved (the results are written all the same, with the
# problems listed; goals not met are reported, not failures); 2 bad usage or a missing tool.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

EMAILS=${EMAILS:-1000000}
CHUNK=${CHUNK:-100000}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-64}
TEXT_BYTES=${TEXT_BYTES:-1024}
LAT_REQUESTS=${LAT_REQUESTS:-1000}
LAT_SECONDS=${LAT_SECONDS:-30}
LAT_MIN=${LAT_MIN:-20}
LAT_WARMUP=${LAT_WARMUP:-5}
LAT_BLOCK=${LAT_BLOCK:-50}
TOUCH_MEMORY=${TOUCH_MEMORY:-1}
NOISY_PCT=${NOISY_PCT:-10}
PH_BIN=${PH_BIN:-build/posthorn}
RESULTS=${RESULTS-bench/RESULTS.md}
SEND_RATE=100000000 # limits.send_rate_per_minute: its maximum, so that nothing is throttled
DOMAIN=mail.example.com
FROM="Bench <bench@$DOMAIN>"
DKIM_ZONE=dkim.posthorn.test
SPF_INCLUDE=spf.posthorn.test
INBOUND_MX=mx.posthorn.test
SEARCH_WORD=invoice # the first of the 8 subject words, lower case: matches k mod 8 == 0
# The goals of issue 25, item 8.
GOAL_RATIO=0.8   # the last chunk's send rate / the first's, at least
GOAL_RESTART=2   # seconds from exec to the first GET /healthz answered 200, less than
GOAL_P99_MS=50   # every read's p99, less than

say() { printf '[scale] %s\n' "$*" >&2; }
for v in EMAILS CHUNK THREADS CONNECTIONS TEXT_BYTES LAT_REQUESTS LAT_SECONDS LAT_MIN LAT_BLOCK NOISY_PCT; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')" 2
done
[[ $LAT_WARMUP =~ ^[0-9]+$ ]] || die "LAT_WARMUP must be a whole number (got '$LAT_WARMUP')" 2
[[ $TOUCH_MEMORY == [01] ]] || die "TOUCH_MEMORY must be 0 or 1 (got '$TOUCH_MEMORY')" 2
((EMAILS % CHUNK == 0)) || die "EMAILS ($EMAILS) must be a multiple of CHUNK ($CHUNK)" 2
((CHUNK >= THREADS)) || die "CHUNK ($CHUNK) must be at least THREADS ($THREADS)" 2
((CONNECTIONS >= THREADS)) || die "CONNECTIONS ($CONNECTIONS) must be at least THREADS ($THREADS)" 2
((EMAILS >= 100)) || die "EMAILS must be at least 100 (got $EMAILS)" 2
((EMAILS / CHUNK >= 2)) || say "warning: a single chunk: the first and the last are the same"
DEEP_PAGE=${DEEP_PAGE:-$((EMAILS / 200 > 0 ? EMAILS / 200 : 1))}
[[ $DEEP_PAGE =~ ^[1-9][0-9]*$ ]] || die "DEEP_PAGE must be a positive integer (got '$DEEP_PAGE')" 2

missing=()
for tool in wrk sqlite3 curl timeout awk sort pgrep du df; do
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
  die "missing tools: ${missing[*]} — install them with scripts/install-deps.sh --bench (wrk; sqlite3, curl, python3, dnsmasq-base from the base set)" 2
fi
[[ -x $PH_BIN ]] || die "no posthorn binary at $PH_BIN — build it first (make build), or set PH_BIN" 2
# $EPOCHREALTIME (bash 5) times the chunks and the restart without a fork.
[[ -n ${EPOCHREALTIME:-} ]] || die "this script needs bash 5 (\$EPOCHREALTIME)" 2

while read -r name; do unset "$name"; done < <(compgen -e | grep '^POSTHORN_' || true)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/posthorn-bench.XXXXXX")
ph_pid=
ph_exit=
dns_pid=
hold_pid=
bg_pid=
poll_pid=

# ---- process control ---------------------------------------------------------------

# A background helper (wrk, the restart poller, the latency client): TERM, then KILL.
stop_helper() { # PID
  [[ -n $1 ]] || return 0
  kill -TERM "$1" 2>/dev/null || true
  if ! wait_gone "$1" 5; then kill -KILL "$1" 2>/dev/null || true; fi
  wait "$1" 2>/dev/null || true
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_helper "$bg_pid"
  stop_helper "$poll_pid"
  stop_posthorn
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

now() { echo "${EPOCHREALTIME/,/.}"; }

# ---- the fill's request ------------------------------------------------------------

# The text of every email (TEXT_BYTES bytes, lines of at most 72 characters), as a JSON
# string; and a chunk's wrk script around it.
"$PY" - "$tmp/text.json" "$TEXT_BYTES" <<'PY'
import json, sys
path, size = sys.argv[1], int(sys.argv[2])
words = ("The quick brown fox jumps over the lazy dog. Pack my box with five dozen "
         "liquor jugs. How vexingly quick daft zebras jump! ").split()
text, line, i = "", "", 0
while len(text) + len(line) < size:
    w = words[i % len(words)]
    i += 1
    if line and len(line) + 1 + len(w) > 72:
        text += line + "\n"
        line = w
    else:
        line = (line + " " + w) if line else w
text = (text + line)[:size - 1].rstrip() + "\n"
text = text + "x" * (size - len(text.encode()))  # exactly `size` bytes
with open(path, "w") as f:
    f.write(json.dumps(text))
PY
grep -q ']==]' "$tmp/text.json" && die "the text contains the Lua string delimiter"
{
  echo 'wrk.method = "POST"'
  echo 'wrk.headers["Content-Type"] = "application/json"'
  printf 'local TEXT = [==[%s]==]\n' "$(cat "$tmp/text.json")"
  printf 'local FROM = [==[%s]==]\n' "$FROM"
  cat <<'LUA'
-- Chunk arguments: the first k, the number of sends, the number of threads, the directory
-- of the done files. Thread t sends k = first + t, first + t + threads, ...: each k of the
-- chunk exactly once over all threads.
local A = {"Invoice", "Receipt", "Shipment", "Password", "Welcome", "Reminder", "Statement", "Security"}
local B = {"ready", "confirmed", "updated", "pending", "available"}
local ok_ffi, ffi = pcall(require, "ffi")
local ts
if ok_ffi then
  ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } scale_timespec;
int clock_gettime(int clk_id, scale_timespec *tp);
]]
  ts = ffi.new("scale_timespec")
end
-- Wall-clock seconds (CLOCK_REALTIME, as bash's EPOCHREALTIME), or -1 without ffi.
local function now_s()
  if not ok_ffi then return -1 end
  ffi.C.clock_gettime(0, ts)
  return tonumber(ts.tv_sec) + tonumber(ts.tv_nsec) / 1e9
end

local next_tid = 0
function setup(thread)
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
end

local first, stride, dir, quota, filler
local issued, answered, ok, fillers, finished, primed = 0, 0, 0, 0, false, false
local failed, sample = {}, nil
local t_first, t_last = -1, -1

function init(args)
  first = tonumber(args[1])
  local count = tonumber(args[2])
  stride = tonumber(args[3])
  dir = args[4]
  quota = math.floor(count / stride) + ((tid < count % stride) and 1 or 0)
  filler = wrk.format("GET", "/healthz", {}, nil)
end

function request()
  -- wrk calls thread 0's request() once before the run to see how many requests it
  -- returns, and drops the answer: the first call of every thread is therefore a filler,
  -- so that no send is lost (the other threads send one GET /healthz more).
  if not primed then
    primed = true
    return filler
  end
  if issued >= quota then
    fillers = fillers + 1
    return filler
  end
  if issued == 0 then t_first = now_s() end
  local k = first + tid + stride * issued
  issued = issued + 1
  local d = k % 1000
  local cc = ""
  if k % 4 == 0 then cc = ',"cc":"copy' .. k .. '@example' .. d .. '.org"' end
  local body = '{"from":"' .. FROM .. '","to":"user' .. k .. '@example' .. d .. '.net"' .. cc ..
    ',"subject":"' .. A[k % 8 + 1] .. ' ' .. B[math.floor(k / 8) % 5 + 1] .. ' #' .. k ..
    '","text":' .. TEXT .. '}'
  return wrk.format(nil, nil, nil, body)
end

local function finish()
  finished = true
  local parts = {}
  for status, n in pairs(failed) do parts[#parts + 1] = status .. ":" .. n end
  local path = dir .. "/done-" .. tid
  local f = io.open(path .. ".tmp", "w")
  f:write(string.format("%d %d %d %.6f %.6f %s\n", answered, ok, fillers, t_first, t_last,
    #parts > 0 and table.concat(parts, ",") or "-"))
  if sample then f:write(sample, "\n") end
  f:close()
  os.rename(path .. ".tmp", path) -- the script waits for this name: the file is whole
  wrk.thread:stop()
end

function response(status, headers, body)
  if finished then return end
  if status == 200 and body == '{"status":"ok"}' then return end -- a filler's answer
  answered = answered + 1
  if status == 200 and body:sub(1, 10) == '{"id":"em_' then
    ok = ok + 1
  else
    failed[status] = (failed[status] or 0) + 1
    if not sample then sample = status .. " " .. body:sub(1, 300):gsub("\n", " ") end
  end
  if answered >= quota then
    t_last = now_s()
    finish()
  end
end
LUA
} >"$tmp/fill.lua"

# ---- the latency client -------------------------------------------------------------

# Reads "label<TAB>path<TAB>checks" lines on stdin; path "{id}" takes the next id of the
# ids file. Checks (comma-separated, on the first answer of each read): total=N (the
# `total` field), ptotal=N (pagination.total), len=N (the length of data), to=ADDR (the
# first entry's `to`), id (every answer is the email asked for), nokey (sent without the
# key). Prints one line per read:
# "label<TAB>n<TAB>p50<TAB>p99<TAB>mean<TAB>max<TAB>bad<TAB>check" (ms; bad: answers that were
# not 200, and connection errors; check: ok or what was wrong).
cat >"$tmp/latency.py" <<'PY'
import http.client, json, math, sys, time

port, key, ids_path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
want_n, max_s, min_n, warmup, block = (int(a) for a in sys.argv[4:9])
ids = [line.strip() for line in open(ids_path) if line.strip()]
reads = []
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line:
        continue
    label, path, checks = line.split("\t")
    reads.append({"label": label, "path": path,
                  "checks": [c for c in checks.split(",") if c and c != "-"],
                  "samples": [], "spent": 0.0, "bad": 0, "bad_sample": "",
                  "check": None, "done": False})
conn = None
next_id = 0

def connect():
    global conn
    if conn is not None:
        conn.close()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)

def one(r):
    """One request: (seconds, status or None on a connection error, body, id asked)."""
    global next_id
    want_id = None
    path = r["path"]
    if path == "{id}":
        want_id = ids[next_id % len(ids)]
        next_id += 1
        path = "/v1/emails/" + want_id
    headers = {} if "nokey" in r["checks"] else {"Authorization": "Bearer " + key}
    t0 = time.perf_counter()
    try:
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        body = resp.read()
    except (OSError, http.client.HTTPException) as e:
        connect()
        return time.perf_counter() - t0, None, str(e).encode(), want_id
    return time.perf_counter() - t0, resp.status, body, want_id

def check(r, body, want_id):
    if want_id is not None and ('"id":"%s"' % want_id).encode() not in body:
        return "the answer is not email %s: %s" % (want_id, body[:200])
    if not [c for c in r["checks"] if c not in ("id", "nokey")]:
        return "ok"
    try:
        doc = json.loads(body)
    except ValueError:
        return "not JSON: %s" % body[:200]
    for c in r["checks"]:
        if c in ("id", "nokey"):
            continue
        name, _, want = c.partition("=")
        if name == "total":
            got = doc.get("total")
        elif name == "ptotal":
            got = (doc.get("pagination") or {}).get("total")
        elif name == "len":
            got = len(doc.get("data") or [])
        elif name == "to":
            data = doc.get("data") or [{}]
            got = data[0].get("to")
        else:
            return "unknown check %s" % c
        if str(got) != want:
            return "%s is %s, not %s" % (name, got, want)
    return "ok"

def run(r, measured):
    secs, status, body, want_id = one(r)
    if status != 200:
        r["bad"] += 1
        if not r["bad_sample"]:
            r["bad_sample"] = "%s %s" % (status, body[:200].decode(errors="replace"))
    elif r["check"] is None or want_id is not None:
        result = check(r, body, want_id)
        if r["check"] in (None, "ok"):
            r["check"] = result
    if measured:
        r["samples"].append(secs)
        r["spent"] += secs
    return secs

connect()
for r in reads:  # warm-up: not measured (the first reads after the restart fill the caches)
    spent = 0.0
    for _ in range(warmup):
        spent += run(r, False)
        if spent >= 2.0:
            break
while not all(r["done"] for r in reads):
    for r in reads:
        if r["done"]:
            continue
        turn = 0.0
        for _ in range(block):
            turn += run(r, True)
            n = len(r["samples"])
            if n >= want_n or (r["spent"] >= max_s and n >= min_n):
                r["done"] = True
                break
            if turn >= 1.0:
                break
conn.close()

def pct(xs, p):  # nearest rank
    return xs[max(0, math.ceil(p / 100 * len(xs)) - 1)]

for r in reads:
    xs = sorted(r["samples"])
    ms = [x * 1000 for x in xs]
    check_text = r["check"] or "no answer with status 200"
    if r["bad"]:
        check_text += "; %d not 200, e.g. %s" % (r["bad"], r["bad_sample"])
    print("\t".join([r["label"], str(len(xs)), "%.3f" % pct(ms, 50), "%.3f" % pct(ms, 99),
                     "%.3f" % (sum(ms) / len(ms)), "%.3f" % ms[-1], str(r["bad"]),
                     check_text.replace("\t", " ").replace("\n", " ")]))
PY

# The restart poller: prints "ready", then asks GET /healthz every 5 ms until it answers
# 200 and prints the wall-clock time of that answer (CLOCK_REALTIME, as $EPOCHREALTIME).
cat >"$tmp/poll.py" <<'PY'
import socket, sys, time
port, limit = int(sys.argv[1]), float(sys.argv[2])
print("ready", flush=True)
deadline = time.time() + limit
while time.time() < deadline:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            data = b""
            while len(data) < 12:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            if data.startswith(b"HTTP/1.1 200"):
                print("%.6f" % time.time(), flush=True)
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.005)
sys.exit(1)
PY

# ---- start the servers -------------------------------------------------------------

nproc_n=$(nproc)
cpu_model=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
[[ -n $cpu_model ]] || cpu_model=unknown
mem_gib=$(awk '/^MemTotal:/ { printf "%.1f", $2 / 1048576; exit }' /proc/meminfo)
# shellcheck disable=SC1091
os_name=$( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || echo unknown)
wrk_version=$( (wrk -v 2>&1 || true) | awk 'NR == 1 { print $2 }')
py_version=$("$PY" -c 'import platform; print(platform.python_version())')
sqlite_version=$(sqlite3 --version | awk '{ print $1 }')
ph_commit=$(binary_commit)
# A copy, so that a rebuild during the run cannot change the binary under the benchmark.
cp "$PH_BIN" "$tmp/posthorn"
ph_sha=$(sha256sum "$tmp/posthorn" | cut -c1-12)
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
disk=$(df -P "$tmp" | awk 'NR == 2 { print $1 }')
fs_type=$( (findmnt -n -o FSTYPE -T "$tmp" 2>/dev/null || stat -f -c %T "$tmp") | head -n1)
case $fs_type in
  tmpfs | ramfs) say "warning: $tmp is on $fs_type: the store would be in memory, set TMPDIR to a directory on a disk" ;;
esac
# ~2.2 KB a send with a 1 KB text when stopped, more while running (see the header): room
# for 3x 2.5 KB (with TEXT_BYTES instead of 1 KB).
need_kib=$((EMAILS * (TEXT_BYTES + 1536) * 3 / 1024))
free_kib=$(df -Pk "$tmp" | awk 'NR == 2 { print $4 }')
((free_kib >= need_kib)) ||
  die "$tmp has $((free_kib / 1024)) MiB free; $EMAILS emails need about $((need_kib / 3072)) MiB (3x that asked for): set TMPDIR" 2

# dnsmasq answers only for the names it is authoritative for (--local); the records of the
# domain are added once posthorn has made them, by a restart on the same port.
start_posthorn_with_verified_domain

# One send with curl: it must answer 200 with an id, and the email must be readable and
# QUEUED (the relay holds delivery). Its subject and address match none of the searches.
code=$(api POST /v1/emails "$tmp/send.json" \
  "{\"from\":\"$FROM\",\"to\":\"check@example.net\",\"subject\":\"scale benchmark: the check send\",\"text\":$(cat "$tmp/text.json")}")
first_id=$(jfield "$tmp/send.json" id)
[[ $code == 200 && $first_id == em_* ]] || die "POST /v1/emails answered $code: $(head -c 500 "$tmp/send.json")"
code=$(api GET "/v1/emails/$first_id" "$tmp/first.json")
[[ $code == 200 && $(jfield "$tmp/first.json" id) == "$first_id" ]] ||
  die "GET /v1/emails/$first_id answered $code: $(head -c 500 "$tmp/first.json")"
first_status=$(jfield "$tmp/first.json" status)
[[ $first_status == QUEUED ]] ||
  die "the first email is $first_status, not QUEUED: is the delivery relay not holding the delivery engine? $(head -c 500 "$tmp/first.json")"
extra_sends=1 # sends made outside wrk, each a stored email

# ---- fill ----------------------------------------------------------------------------

# run_chunk INDEX FIRST_K COUNT: one wrk run that sends k = FIRST_K .. FIRST_K+COUNT-1 once
# each; sets C to "sends_per_s seconds sends ok p50 p99 cpu_ms_per_send steal other
# rss_kib anon_kib file_kib db_wal_bytes socket_errors" and C_FAILED to the non-200 answers
# ("status:count,..." and a sample, or empty).
C=
C_FAILED=
fill_timeout=$((600 + CHUNK / 100)) # seconds: a chunk at 100 sends/s would be broken anyway
run_chunk() {
  local idx=$1 first=$2 count=$3 out dir t0 t_done deadline n t m0 m1 c0 c1 w0 w1 tck
  local answered=0 ok=0 t_first=-1 t_last=-1 polls=0 a o tf tl st secs parsed p50 p99 se rss anon file
  out="$tmp/wrk-chunk-$idx.txt"
  dir="$tmp/fill-$idx"
  mkdir -p "$dir"
  C=
  C_FAILED=
  m0=$(machine_ticks)
  c0=$(cpu_ticks "$ph_pid")
  w0=$(child_ticks)
  t0=$(now)
  wrk --latency -t"$THREADS" -c"$CONNECTIONS" -d"$((fill_timeout + 60))s" --timeout 60s \
    -s "$tmp/fill.lua" -H "$auth" "$ph_url" "$first" "$count" "$THREADS" "$dir" >"$out" 2>&1 &
  bg_pid=$!
  deadline=$((SECONDS + fill_timeout))
  while :; do
    n=0
    for ((t = 0; t < THREADS; t++)); do
      [[ -e $dir/done-$t ]] && n=$((n + 1))
    done
    ((n == THREADS)) && break
    if ! kill -0 "$ph_pid" 2>/dev/null; then
      say "posthorn died during chunk $idx; its log ends with:"
      tail -n 30 "$tmp/posthorn.log" >&2 || true
      exit 1
    fi
    if ! kill -0 "$bg_pid" 2>/dev/null; then
      cat "$out" >&2
      die "wrk ended before its sends of chunk $idx were answered"
    fi
    # wrk reports an error of the script on stderr (unbuffered) and goes on without it.
    if ((++polls % 50 == 0)) && grep -qF "$tmp/fill.lua:" "$out"; then
      cat "$out" >&2
      die "wrk could not run fill.lua"
    fi
    if ((SECONDS > deadline)); then
      cat "$out" >&2
      die "chunk $idx: not every send answered within $fill_timeout s ($n of $THREADS threads done; a lost answer or a stalled server)"
    fi
    sleep 0.02
  done
  t_done=$(now)
  kill -INT "$bg_pid" 2>/dev/null || true
  if ! wait_gone "$bg_pid" 10; then kill -KILL "$bg_pid" 2>/dev/null || true; fi
  wait "$bg_pid" 2>/dev/null || true
  bg_pid=
  c1=$(cpu_ticks "$ph_pid")
  w1=$(child_ticks)
  m1=$(machine_ticks)
  if grep -qF "$tmp/fill.lua:" "$out"; then
    cat "$out" >&2
    die "wrk could not run fill.lua"
  fi
  for ((t = 0; t < THREADS; t++)); do
    read -r a o _ tf tl st <"$dir/done-$t"
    answered=$((answered + a))
    ok=$((ok + o))
    if [[ $st != - ]]; then
      C_FAILED+="${C_FAILED:+; }thread $t: $st ($(sed -n 2p "$dir/done-$t"))"
    fi
    t_first=$(awk -v a="$t_first" -v b="$tf" 'BEGIN { printf "%.6f\n", (a < 0 || b < a) ? b : a }')
    t_last=$(awk -v a="$t_last" -v b="$tl" 'BEGIN { printf "%.6f\n", (b > a) ? b : a }')
  done
  ((answered == count)) || die "chunk $idx: the threads counted $answered answers for $count sends"
  # The threads' own clocks (first request to last answer); without LuaJIT's ffi, the
  # script's (wrk's start to the last done file seen, within 20 ms).
  if awk -v a="$t_first" 'BEGIN { exit !(a < 0) }'; then
    secs=$(calc "$t_done - $t0")
  else
    secs=$(calc "$t_last - $t_first")
  fi
  parsed=$(parse_wrk "$out") || {
    cat "$out" >&2
    die "cannot parse the wrk output of chunk $idx"
  }
  read -r _ p50 p99 _ _ se <<<"$parsed"
  tck=$(getconf CLK_TCK)
  read -r rss anon file < <(awk '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 }
    END { print r + 0, a + 0, f + 0 }' "/proc/$ph_pid/status")
  C="$(calc "$count / $secs") $secs $count $ok $p50 $p99 $(calc "($c1 - $c0) * 1000 / $tck / $count")"
  C+=" $(noise_between "$m0" "$m1" $((c1 - c0 + w1 - w0))) $rss $anon $file"
  C+=" $(($(stat -c %s "$db") + $(stat -c %s "$db-wal" 2>/dev/null || echo 0))) $se"
}

if ((TOUCH_MEMORY)); then
  touch_free_memory
else
  TOUCHED_GIB=0 TOUCHED_S=0
fi

chunks=$((EMAILS / CHUNK))
noisy=()
declare -a ch_rate ch_secs ch_p50 ch_p99 ch_cpu ch_noise ch_rss ch_anon ch_file ch_db
sends_ok=0
sock_errors=0
failed_sends=()
fill_t0=$(now)
for ((c = 1; c <= chunks; c++)); do
  run_chunk "$c" $(((c - 1) * CHUNK)) "$CHUNK"
  read -r rate secs count ok p50 p99 cpu st ot rss anon file dbb se <<<"$C"
  sends_ok=$((sends_ok + ok))
  sock_errors=$((sock_errors + se))
  [[ -z $C_FAILED ]] || failed_sends+=("chunk $c: $C_FAILED")
  ch_rate[c]=$rate ch_secs[c]=$secs ch_p50[c]=$p50 ch_p99[c]=$p99 ch_cpu[c]=$cpu
  ch_noise[c]="$st% / $ot%" ch_rss[c]=$rss ch_anon[c]=$anon ch_file[c]=$file ch_db[c]=$dbb
  note_noise "chunk $c" "$st" "$ot"
  say "chunk $c/$chunks: $((c * CHUNK)) sent, $(int "$rate") sends/s, p99 $(ms "$p99") ms, RSS $((rss / 1024)) MiB, db+wal $((dbb / 1048576)) MiB"
done
fill_s=$(calc "$(now) - $fill_t0")

# ---- at N: size, stop, count, restart ------------------------------------------------

sleep 1 # let the last group commit of the request log land
# The data dir's files: "name bytes" lines.
data_files() { find "$tmp/data" -maxdepth 1 -type f -printf '%f %s\n' | sort; }
data_files >"$tmp/files-live.txt"
du_live=$(du -sk "$tmp/data" | awk '{ print $1 }')
held=$(held_sessions)
rss_end=$(awk '/^VmRSS:/ { print $2 }' "/proc/$ph_pid/status")
hwm_end=$(awk '/^VmHWM:/ { print $2 }' "/proc/$ph_pid/status")
threads_end=$(awk '/^Threads:/ { print $2 }' "/proc/$ph_pid/status")

say "stopping posthorn (SIGTERM)"
t0=$(now)
stop_posthorn
stop1_s=$(calc "$(now) - $t0")
stop1_exit=$ph_exit
data_files >"$tmp/files-stopped.txt"
du_stopped=$(du -sk "$tmp/data" | awk '{ print $1 }')

sq() { sqlite3 -separator ' ' "$db" '.timeout 10000' "$@"; }
rows=$(sq 'SELECT COUNT(*) FROM emails;')
read -r n_env n_rcpt n_bodies < <(sq "SELECT (SELECT COUNT(envelope_id) FROM emails), (SELECT COUNT(*) FROM recipients), (SELECT COUNT(*) FROM email_bodies);")
email_status=$(sq "SELECT status || ': ' || COUNT(*) FROM emails GROUP BY status ORDER BY status;" | paste -sd, - | sed 's/,/, /g')
log_status=$(sq "SELECT status || ': ' || COUNT(*) FROM request_logs WHERE method = 'POST' AND url = '/v1/emails' GROUP BY status ORDER BY status;" | paste -sd, - | sed 's/,/, /g')
log_200=$(sq "SELECT COUNT(*) FROM request_logs WHERE method = 'POST' AND url = '/v1/emails' AND status = 200;")
log_rows=$(sq 'SELECT COUNT(*) FROM request_logs;')
# Random ids among the emails of the fill, for GET /v1/emails/{id}.
sq "SELECT id FROM emails WHERE id != '$first_id' ORDER BY random() LIMIT $((LAT_REQUESTS + LAT_WARMUP));" >"$tmp/ids.txt"
expected_rows=$((EMAILS + extra_sends))
expected_rcpt=$((expected_rows + (EMAILS + 3) / 4)) # a cc when k mod 4 == 0
expected_word=$(((EMAILS + 7) / 8))                 # SEARCH_WORD: k mod 8 == 0

# The restart: the poller asks before the server exists, so that the first 200 is seen
# within ~5 ms of its answer.
say "restarting posthorn"
"$PY" "$tmp/poll.py" "$ph_port" 120 >"$tmp/poll.txt" 2>&1 &
poll_pid=$!
for ((i = 0; i < 100; i++)); do
  grep -q ready "$tmp/poll.txt" 2>/dev/null && break
  sleep 0.05
done
grep -q ready "$tmp/poll.txt" || die "the restart poller did not start: $(cat "$tmp/poll.txt")"
t0=$(now)
env "${ph_env[@]}" "$tmp/posthorn" serve >>"$tmp/posthorn.log" 2>&1 &
ph_pid=$!
if ! wait "$poll_pid"; then
  poll_pid=
  tail -n 30 "$tmp/posthorn.log" >&2 || true
  die "posthorn did not answer GET /healthz with 200 within 120 s of its restart"
fi
poll_pid=
restart_s=$(calc "$(tail -n1 "$tmp/poll.txt") - $t0")
kill -0 "$ph_pid" 2>/dev/null || die "posthorn exited after its restart"
wait_http "$ph_pid" 20 200 -H "$auth" "$base/v1/domains" || die "posthorn answers /healthz but not GET /v1/domains after its restart"
say "restart: $(fmt '%.3f' "$restart_s") s from exec to the first GET /healthz answered 200"

# ---- the search index ----------------------------------------------------------------
# The store's search index (docs/architecture.md, "The lists' search index and counts") is
# kept by a thread of low priority that falls behind a full load and catches up after: the
# reads are measured once it has (its mark at the largest recipient id), and how long that
# took after the restart is reported.
index_db="$db-search"
index_s=
index_late=
idx_t0=$(now)
if [[ -f $index_db ]]; then
  top=$(sqlite3 "$db" '.timeout 10000' 'SELECT coalesce(max(id), 0) FROM recipients;')
  for ((i = 0; i < 3000; i++)); do
    mark=$(sqlite3 "$index_db" '.timeout 10000' "SELECT coalesce((SELECT value FROM marks WHERE name = 'recipients'), 0);" 2>/dev/null || echo 0)
    [[ $mark -ge $top ]] && break
    sleep 0.2
  done
  index_s=$(calc "$(now) - $idx_t0")
  if [[ $mark -ge $top ]]; then
    say "search index: caught up $(fmt '%.1f' "$index_s") s after the restart (mark $mark)"
  else
    index_late="the search index had not caught up 600 s after the restart (mark $mark of $top)"
    index_s=
  fi
fi

# ---- latencies -------------------------------------------------------------------------

rcpt_k=$((EMAILS * 7 / 10 + 3))
rcpt="user$rcpt_k@example$((rcpt_k % 1000)).net"
end_date=$(date -u '+%Y-%m-%dT%H:%M:%SZ')
start_date=$(date -u -d '1 day ago' '+%Y-%m-%dT%H:%M:%SZ')
urlq() { "$PY" -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
# The length of a page of 100: what is left of TOTAL after PAGE-1 full pages, at most 100.
page_len() { # TOTAL PAGE
  local left=$(($1 - ($2 - 1) * 100))
  ((left < 0)) && left=0
  ((left > 100)) && left=100
  echo "$left"
}
deep_len=$(page_len "$expected_rows" "$DEEP_PAGE")
word_len=$(page_len "$expected_word" 1)
# label, path, checks (see latency.py); the labels are the table's first column.
cat >"$tmp/reads.tsv" <<EOF
\`GET /healthz\` (no key; the client's own floor)	/healthz	nokey
\`GET /v1/emails/{id}\` (a random one each time)	{id}	id
\`GET /v1/logs?limit=100\`	/v1/logs?limit=100	len=100
\`GET /v1/email?limit=100\`	/v1/email?limit=100	total=$expected_rows,len=100
\`GET /v1/email?limit=100&page=$DEEP_PAGE\`	/v1/email?limit=100&page=$DEEP_PAGE	total=$expected_rows,len=$deep_len
\`GET /v1/email?limit=100&search=<one recipient>\`	/v1/email?limit=100&search=$(urlq "$rcpt")	total=1,to=$rcpt
\`GET /v1/email?limit=100&search=$SEARCH_WORD\` (1/8 of the subjects)	/v1/email?limit=100&search=$SEARCH_WORD	total=$expected_word,len=$word_len
\`GET /v1/email?limit=100&start_date=<a day ago>&end_date=<now>\`	/v1/email?limit=100&start_date=$(urlq "$start_date")&end_date=$(urlq "$end_date")	total=$expected_rows,len=100
\`GET /v1/emails/envelope?limit=100&search=$SEARCH_WORD\`	/v1/emails/envelope?limit=100&search=$SEARCH_WORD	ptotal=$expected_word,len=$word_len
\`GET /v1/emails/envelope?limit=100&page=$DEEP_PAGE\`	/v1/emails/envelope?limit=100&page=$DEEP_PAGE	ptotal=$expected_rows,len=$deep_len
EOF
say "latencies: up to $LAT_REQUESTS sequential requests per read (or ${LAT_SECONDS}s and at least $LAT_MIN), round-robin"
lat_t0=$(now)
m0=$(machine_ticks)
c0=$(cpu_ticks "$ph_pid")
w0=$(child_ticks)
# The client's time bound: every read at its time limit, plus one slow request each.
lat_bound=$((12 * (LAT_SECONDS + 120) + 600))
"$PY" "$tmp/latency.py" "$ph_port" "$key" "$tmp/ids.txt" "$LAT_REQUESTS" "$LAT_SECONDS" "$LAT_MIN" \
  "$LAT_WARMUP" "$LAT_BLOCK" <"$tmp/reads.tsv" >"$tmp/latency.txt" 2>"$tmp/latency.err" &
bg_pid=$!
deadline=$((SECONDS + lat_bound))
while kill -0 "$bg_pid" 2>/dev/null; do
  if ! kill -0 "$ph_pid" 2>/dev/null; then
    say "posthorn died during the latency runs; its log ends with:"
    tail -n 30 "$tmp/posthorn.log" >&2 || true
    exit 1
  fi
  ((SECONDS <= deadline)) || die "the latency client did not finish within $lat_bound s"
  sleep 0.5
done
lat_rc=0
wait "$bg_pid" || lat_rc=$?
bg_pid=
c1=$(cpu_ticks "$ph_pid")
w1=$(child_ticks)
m1=$(machine_ticks)
lat_s=$(calc "$(now) - $lat_t0")
read -r lat_st lat_ot <<<"$(noise_between "$m0" "$m1" $((c1 - c0 + w1 - w0)))"
note_noise "the latency runs" "$lat_st" "$lat_ot"
if ((lat_rc != 0)) || [[ $(wc -l <"$tmp/latency.txt") -ne $(wc -l <"$tmp/reads.tsv") ]]; then
  cat "$tmp/latency.err" >&2
  die "the latency client failed (exit $lat_rc)"
fi
rss_lat=$(awk '/^VmRSS:/ { print $2 }' "/proc/$ph_pid/status")

say "stopping posthorn (SIGTERM)"
t0=$(now)
stop_posthorn
stop2_s=$(calc "$(now) - $t0")
server_problems=$(grep -Ec ' (warning|error|critical) ' "$tmp/posthorn.log" || true)
stop_dnsmasq
stop_hold

# ---- checks ----------------------------------------------------------------------------

problems=()
[[ -z $index_late ]] || problems+=("$index_late")
[[ $stop1_exit == 0 ]] || problems+=("posthorn exited with status $stop1_exit after the SIGTERM at N")
[[ $ph_exit == 0 ]] || problems+=("posthorn exited with status $ph_exit after the final SIGTERM")
((sends_ok == EMAILS)) || problems+=("$((EMAILS - sends_ok)) of the $EMAILS sends were not answered 200: $(printf '%s; ' "${failed_sends[@]}" | sed 's/; $//')")
((sock_errors == 0)) || problems+=("wrk saw $sock_errors socket errors (connect/read/write/timeout) during the fill")
((rows == sends_ok + extra_sends)) ||
  problems+=("emails holds $rows rows for $sends_ok sends answered 200 by wrk + $extra_sends by curl: every 200 must be one stored email")
((n_env == rows && n_bodies == rows)) || problems+=("$rows emails but $n_env envelopes and $n_bodies bodies (one each expected)")
((n_rcpt == expected_rcpt)) || problems+=("recipients holds $n_rcpt rows, $expected_rcpt expected (one per email, two for k mod 4 == 0)")
((log_200 == rows)) || problems+=("the request log has $log_200 POST /v1/emails answered 200 for $rows emails")
((server_problems == 0)) || problems+=("posthorn logged $server_problems warning/error lines")
while IFS=$'\t' read -r label n p50 p99 mean max bad check; do
  [[ $bad == 0 ]] || problems+=("$label: $bad answers were not 200 ($check)")
  [[ $bad != 0 || $check == ok ]] || problems+=("$label: $check")
done <"$tmp/latency.txt"

# ---- report ----------------------------------------------------------------------------

# 1234567 -> 1,234,567 whatever the locale (printf's %'d groups only in some).
thousands() { printf '%d' "$1" | sed -E ':a; s/^([0-9]+)([0-9]{3})/\1,\2/; ta'; }
yes_no() { if awk "BEGIN { exit !($1) }"; then echo "**met**"; else echo "**not met**"; fi; }
mib() { fmt '%.1f' "$(calc "$1 / 1048576")"; }
kib_mib() { fmt '%.0f' "$(calc "$1 / 1024")"; }
ratio_fl=$(calc "${ch_rate[chunks]} / ${ch_rate[1]}")
goal_ratio=$(yes_no "$ratio_fl >= $GOAL_RATIO")
goal_restart=$(yes_no "$restart_s < $GOAL_RESTART")
live_bytes=$(awk '{ s += $2 } END { print s + 0 }' "$tmp/files-live.txt")
stopped_bytes=$(awk '{ s += $2 } END { print s + 0 }' "$tmp/files-stopped.txt")
total_s=$SECONDS
chunk_k=$(fmt '%g' "$(calc "$CHUNK / 1000")")

section="$tmp/section.md"
{
  echo "## Scale: $(thousands "$EMAILS") emails through \`POST /v1/emails\`, then the store's size, a restart and the reads"
  echo
  echo "Generated by \`bench/scale.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC') (the whole run: $total_s s)."
  echo
  echo "- Machine: $nproc_n CPUs, $cpu_model, $mem_gib GiB; $os_name, kernel $(uname -r); load average $load_at_start at the start."
  echo "- Disk: the data dir on $disk ($fs_type)."
  if ((TOUCH_MEMORY)); then
    memory_line
  else
    echo "- Memory: not touched before the run (TOUCH_MEMORY=0)."
  fi
  echo "- Software: posthorn $ph_commit (\`$PH_BIN\`, sha256 $ph_sha…), wrk $wrk_version, SQLite $sqlite_version (the counts),"
  echo "  dnsmasq $dns_version, Python $py_version (the latency client and the restart poller)."
  echo "- posthorn: fresh data dir (SQLite, WAL, synchronous=FULL), one account and key, the domain"
  echo "  $DOMAIN verified against dnsmasq; \`POSTHORN_LIMITS_SEND_RATE_PER_MINUTE=$SEND_RATE\`; delivery"
  echo "  held by a relay that never answers (as in send_emails: the emails stay \`QUEUED\`; $held sessions"
  echo "  waiting at N), so that what is measured is the store, not delivery."
  echo "- Fill: $(thousands "$EMAILS") sends in $chunks chunks of $(thousands "$CHUNK"), each \`wrk --latency -t$THREADS -c$CONNECTIONS -s fill.lua\`"
  echo "  sending each k of the chunk once: \`to\` user<k>@example<k mod 1000>.net, subject \"<A> <B> #<k>\" (A: 8 words,"
  echo "  Invoice, Receipt, …, by k mod 8; B: 5 more), a cc copy<k>@example<k mod 1000>.org when k mod 4 = 0,"
  echo "  $TEXT_BYTES bytes of text; plus $extra_sends send by curl first. Sends/s from each wrk thread's first request to its last answer."
  echo
  echo "Reproduce: \`bench/scale.sh\` (\`EMAILS=$EMAILS CHUNK=$CHUNK\`; see the script's header for the options)."
  echo
  echo "### Fill"
  echo
  echo "sends/s per chunk; p50/p99 of the sends in ms (wrk, closed loop, $CONNECTIONS connections); CPU = server"
  echo "CPU ms per send; RSS after the chunk, MiB (anonymous + file-backed); db+WAL = posthorn.db and its WAL"
  echo "after the chunk, MiB; noise = CPU steal / CPU used by other processes than posthorn and wrk, in % of the machine."
  echo
  echo "| chunk | emails | sends/s | s | p50 | p99 | CPU | RSS (anon + file) | db+WAL | noise |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for ((c = 1; c <= chunks; c++)); do
    echo "| $c | $(thousands $((c * CHUNK))) | $(int "${ch_rate[c]}") | $(fmt '%.1f' "${ch_secs[c]}") |" \
      "$(ms "${ch_p50[c]}") | $(ms "${ch_p99[c]}") | $(ms "${ch_cpu[c]}") |" \
      "$(kib_mib "${ch_rss[c]}") ($(kib_mib "${ch_anon[c]}") + $(kib_mib "${ch_file[c]}")) | $(mib "${ch_db[c]}") | ${ch_noise[c]} |"
  done
  echo
  echo "The first ${chunk_k}k: **$(int "${ch_rate[1]}") sends/s**; the last ${chunk_k}k: **$(int "${ch_rate[chunks]}") sends/s**;"
  echo "last / first = **$(fmt '%.3f' "$ratio_fl")** (goal: at least $GOAL_RATIO: $goal_ratio). The whole fill: $(fmt '%.0f' "$fill_s") s."
  echo
  echo "Stored, counted with sqlite3 after the SIGTERM: **$(thousands "$rows") emails** for $(thousands "$sends_ok") sends answered 200"
  echo "(each counted by the wrk thread that sent it) + $extra_sends by curl; $n_env envelopes, $n_bodies bodies,"
  echo "$(thousands "$n_rcpt") recipients ($(thousands "$expected_rcpt") expected); status $email_status;"
  echo "request log: $(thousands "$log_rows") entries, \`POST /v1/emails\` by status: $log_status."
  if ((rows == sends_ok + extra_sends && log_200 == rows)); then
    echo "Every send answered 200 is a stored email."
  fi
  echo
  echo "### The store at N"
  echo
  echo "Files of the data dir (bytes), with posthorn running at N and after it stopped:"
  echo
  echo "| file | running | stopped |"
  echo "|---|---:|---:|"
  # shellcheck disable=SC2016 # the $ are awk's
  awk 'NR == FNR { live[$1] = $2; names[$1] = 1; next } { stopped[$1] = $2; names[$1] = 1 }
    END { for (n in names) printf "| `%s` | %s | %s |\n", n, (n in live ? live[n] : "—"), (n in stopped ? stopped[n] : "—") }' \
    "$tmp/files-live.txt" "$tmp/files-stopped.txt" | sort
  echo "| **total** | **$(mib "$live_bytes") MiB** | **$(mib "$stopped_bytes") MiB** |"
  echo
  echo "$(fmt '%.0f' "$(calc "$stopped_bytes / $rows")") bytes per email stored (all files after the stop / emails; each email"
  echo "also has its request-log entry); disk use (du) $(kib_mib "$du_live") MiB running, $(kib_mib "$du_stopped") MiB stopped."
  echo "posthorn at N: VmRSS $(kib_mib "$rss_end") MiB (peak VmHWM $(kib_mib "$hwm_end") MiB), $threads_end threads;"
  echo "after the restart and the reads: VmRSS $(kib_mib "$rss_lat") MiB."
  echo
  echo "### Restart"
  echo
  echo "SIGTERM at N: posthorn stopped in $(fmt '%.1f' "$stop1_s") s (exit $stop1_exit; it lets the requests and delivery"
  echo "sessions in hand finish, within a 30 s grace, and flushes the store). Started again on the same data dir:"
  echo "**$(fmt '%.3f' "$restart_s") s from the exec to the first \`GET /healthz\` answered 200** (a poller asking every"
  echo "5 ms; the page cache warm) — goal: under $GOAL_RESTART s: $goal_restart."
  if [[ -n $index_s ]]; then
    echo
    echo "The search index (a thread of low priority, behind during the fill) had taken in every email"
    echo "$(fmt '%.1f' "$index_s") s after the restart; the reads below were measured from then on."
  fi
  echo
  echo "### Reads at N, after the restart"
  echo
  echo "One request at a time on one keep-alive connection (Python \`http.client\`), timed from the request"
  echo "to the last byte of the answer; up to $LAT_REQUESTS per read, or as many as ${LAT_SECONDS} s allow (at least"
  echo "$LAT_MIN), after $LAT_WARMUP unmeasured ones; the reads taken round-robin in turns of at most $LAT_BLOCK requests"
  echo "or 1 s, so that a stall of the machine spreads over all of them. Why not wrk -c4: its closed loop"
  echo "queues each request behind the other three on CPUs it shares, its sample counts differ a"
  echo "thousandfold between a 0.1 ms read and a scan, and it checks neither bodies nor totals. Every"
  echo "answer's status is checked (anything but 200 fails the benchmark), and each list's \`total\`"
  echo "against the fill (emails: $(thousands "$expected_rows"), which the date range covers; \"$SEARCH_WORD\": $(thousands "$expected_word"); the recipient"
  echo "$rcpt: 1); page $DEEP_PAGE (100 a page) is the middle of the store. ms; noise during the reads:"
  echo "$lat_st% steal / $lat_ot% other processes; $(fmt '%.0f' "$lat_s") s in all."
  echo
  echo "| read | n | p50 | p99 | mean | max | checked | p99 < $GOAL_P99_MS ms |"
  echo "|---|---:|---:|---:|---:|---:|---|---|"
  while IFS=$'\t' read -r label n p50 p99 mean max bad check; do
    if [[ $label == *healthz* ]]; then
      goal="(no goal)"
    else
      goal=$(yes_no "$p99 < $GOAL_P99_MS")
    fi
    [[ $check == ok && $bad == 0 ]] && check="200, ok" || check="**$check**"
    echo "| $label | $n | $(ms "$p50") | **$(ms "$p99")** | $(ms "$mean") | $(ms "$max") | $check | $goal |"
  done <"$tmp/latency.txt"
  echo
  if [[ ${#noisy[@]} -gt 0 ]]; then
    echo "Disturbed runs (steal or other processes above $NOISY_PCT% of the machine; their figures"
    echo "understate what the machine can do): $(printf '%s; ' "${noisy[@]}" | sed 's/; $//')."
    echo
  fi
  echo "Durations: fill $(fmt '%.0f' "$fill_s") s, first stop $(fmt '%.0f' "$stop1_s") s, reads $(fmt '%.0f' "$lat_s") s,"
  echo "final stop $(fmt '%.0f' "$stop2_s") s; the whole run $total_s s."
  echo
  if [[ ${#problems[@]} -gt 0 ]]; then
    echo "**Problems observed in this run:**"
    echo
    for p in "${problems[@]}"; do echo "- $p"; done
  else
    echo "No problems observed: every send and every read answered 200, every 200 stored, every total as"
    echo "expected, no socket errors, no warnings in the server log."
  fi
} >"$section"

echo
cat "$section"
echo

[[ -z $RESULTS ]] || write_results_section scale "$section"

if [[ ${#problems[@]} -gt 0 ]]; then
  say "posthorn misbehaved during the benchmark:"
  for p in "${problems[@]}"; do say "  - $p"; done
  if ((server_problems > 0)); then
    say "server log (warnings and errors, first 20):"
    grep -E ' (warning|error|critical) ' "$tmp/posthorn.log" | head -n 20 >&2 || true
  fi
  exit 1
fi
say "done"
