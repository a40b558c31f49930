#!/usr/bin/env bash
# Benchmark (issue 28): the cost of the metrics on the hot path. Two posthorns set up alike,
# one with `POSTHORN_METRICS_ENABLED=true` and one with `false` (metrics::set_enabled(false):
# every count is a load and a branch, and GET /metrics answers 404), loaded in turn with the
# durable `POST /v1/emails` of bench/send_emails.sh. The goal: the send rate with metrics on
# within the noise of the rate without.
#
# What one run does:
#   1. starts dnsmasq, the holding relay and two posthorns as bench/send_emails.sh starts one
#      (start_posthorn_with_verified_domain in bench/lib.sh: a fresh data dir each, one
#      account and key, the domain mail.example.com VERIFIED against dnsmasq, the send rate
#      limit at its maximum, delivery held by a loopback relay that never answers, so that
#      what is measured is acceptance alone), named "on" and "off" after their metrics;
#   2. writes once to the machine's free memory (touch_free_memory), waits up to $SETTLE_S s
#      for the machine to be quiet (in the first two runs of this script, the first measured
#      run, 6 s after the write, was the most disturbed of all, by CPU of other processes;
#      the cause was not pinned down), warms each up, then for
#      $ROUNDS rounds loads each with `wrk --latency -t$THREADS -c$CONNECTIONS
#      -d${DURATION}s` and the same 1 KB POST as bench/send_emails.sh, the one that goes
#      first alternating from round to round (off first in odd rounds); each run's sends/s,
#      p50, p99, server CPU per send and the machine's noise (CPU steal, other processes);
#   3. scrapes `GET /metrics` of "on" once and checks that
#      posthorn_emails_accepted_total{door="api"} is the number of emails in its store, and
#      lies between the 200s wrk counted (plus the sends made with curl) and that plus the
#      requests in flight when the runs ended (wrk does not count those: at most one per
#      connection and run); checks that "off" answers GET /metrics with 404;
#   4. stops both (SIGTERM) and checks each store against the 200s wrk saw, as
#      bench/send_emails.sh does (every 200 a stored email, the request log's statuses);
#   5. reports the medians, the ratio on/off, the noise (the spread between the rounds of
#      "off": (max - min) / median) and a verdict: the ratio within the noise or not, over the
#      undisturbed rounds (neither run with steal or other processes above $NOISY_PCT % of
#      the machine) when there are at least 3 of them and some were disturbed, else over all;
#      and replaces the metrics section of $RESULTS.
#
# Options (environment): ROUNDS=5 DURATION=10 WARMUP=3 THREADS=2 CONNECTIONS=64
#   TEXT_BYTES=1024 NOISY_PCT=10 (flag runs where steal or other processes took more of the
#   machine) SETTLE_S=60 PH_BIN=build/posthorn TOUCH_MEMORY=1 (0: do not write to the free
#   memory first)
#   RESULTS=bench/RESULTS.md (empty: do not write it) KEEP_TMP=1 (keep the temp dir).
#   A smoke test: ROUNDS=1 DURATION=2 WARMUP=1 TOUCH_MEMORY=0 RESULTS= bench/metrics.sh
# Inherited POSTHORN_* variables are ignored.
# Exit status: 0 ok (whatever the verdict); 1 posthorn misbehaved (the results are written
# all the same, with the problems listed); 2 bad usage or a missing tool.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-3}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-64}
TEXT_BYTES=${TEXT_BYTES:-1024}
NOISY_PCT=${NOISY_PCT:-10}
SETTLE_S=${SETTLE_S:-60}
PH_BIN=${PH_BIN:-build/posthorn}
RESULTS=${RESULTS-bench/RESULTS.md}
SEND_RATE=100000000 # limits.send_rate_per_minute: its maximum, so that nothing is throttled
DOMAIN=mail.example.com
FROM="Bench <bench@$DOMAIN>"
TO=user@example.net
DKIM_ZONE=dkim.posthorn.test
SPF_INCLUDE=spf.posthorn.test
INBOUND_MX=mx.posthorn.test

say() { printf '[metrics] %s\n' "$*" >&2; }
for v in ROUNDS DURATION WARMUP THREADS CONNECTIONS TEXT_BYTES NOISY_PCT SETTLE_S; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')" 2
done

missing=()
for tool in wrk sqlite3 curl timeout awk sort pgrep; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
DNSMASQ=$(command -v dnsmasq 2>/dev/null || echo /usr/sbin/dnsmasq)
[[ -x $DNSMASQ ]] || missing+=(dnsmasq)
PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3 2>/dev/null || echo)
[[ -n $PY ]] || missing+=(python3)
if [[ ${#missing[@]} -gt 0 ]]; then
  die "missing tools: ${missing[*]} — install them with scripts/install-deps.sh --bench (wrk; sqlite3, curl, python3, dnsmasq-base from the base set)" 2
fi
[[ -x $PH_BIN ]] || die "no posthorn binary at $PH_BIN — build it first (make build), or set PH_BIN" 2

while read -r name; do unset "$name"; done < <(compgen -e | grep '^POSTHORN_' || true)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/posthorn-bench.XXXXXX")
ph_pid=
ph_exit=
dns_pid=
hold_pid=
bg_pid=
# The two posthorns, by name (on, off): their PIDs, URLs, keys, logs and databases.
declare -A ph_pids urls auths logs dbs

cleanup() {
  local rc=$? n
  trap - EXIT INT TERM
  if [[ -n $bg_pid ]]; then kill -TERM "$bg_pid" 2>/dev/null || true; fi
  for n in "${!ph_pids[@]}"; do
    [[ -z ${ph_pids[$n]} ]] || stop_posthorn_pid "${ph_pids[$n]}"
  done
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

# ---- measurements ------------------------------------------------------------------

# run_wrk NAME LABEL SECONDS: one wrk run of the POST against the posthorn NAME; sets W to
# "req_per_s p50 p99 requests non_2xx socket_errors cpu_ms_per_request steal_pct other_pct"
# (other_pct: CPU used by processes other than that server and wrk, in % of the machine,
# the idle posthorn included) and adds the run to NAME's accounts. Exits when a posthorn died.
W=
declare -A acc_req acc_n2 acc_se acc_conn acc_extra
run_wrk() {
  local n=$1 label=$2 secs=$3 out m0 m1 c0 c1 w0 w1 parsed reqs n2 se tck cpu noise p
  out="$tmp/wrk-$label.txt"
  W=
  m0=$(machine_ticks)
  c0=$(cpu_ticks "${ph_pids[$n]}")
  w0=$(child_ticks)
  if ! bounded $((secs + 30)) "$out" "$out" wrk --latency -d"${secs}s" -t"$THREADS" -c"$CONNECTIONS" \
    -s "$tmp/post.lua" -H "${auths[$n]}" "${urls[$n]}"; then
    cat "$out" >&2
    die "wrk failed ($label)"
  fi
  c1=$(cpu_ticks "${ph_pids[$n]}")
  w1=$(child_ticks)
  m1=$(machine_ticks)
  for p in on off; do
    if ! kill -0 "${ph_pids[$p]}" 2>/dev/null; then
      say "posthorn '$p' died during the run '$label'; its log ends with:"
      tail -n 30 "${logs[$p]}" >&2 || true
      exit 1
    fi
  done
  parsed=$(parse_wrk "$out") || {
    cat "$out" >&2
    die "cannot parse the wrk output ($label)"
  }
  read -r _ _ _ reqs n2 se <<<"$parsed"
  acc_req[$n]=$((${acc_req[$n]:-0} + reqs))
  acc_n2[$n]=$((${acc_n2[$n]:-0} + n2))
  acc_se[$n]=$((${acc_se[$n]:-0} + se))
  acc_conn[$n]=$((${acc_conn[$n]:-0} + CONNECTIONS))
  ((reqs > 0)) || reqs=1
  tck=$(getconf CLK_TCK)
  cpu=$(calc "($c1 - $c0) * 1000 / $tck / $reqs")
  noise=$(noise_between "$m0" "$m1" $((c1 - c0 + w1 - w0)))
  W="$parsed $cpu $noise"
}

# settle: waits up to SETTLE_S seconds for a second in which the machine is busy less than
# NOISY_PCT % (both servers idle then); sets SETTLED to the seconds waited, and SETTLE_BUSY
# to the last second's busy %.
settle() {
  local i a b
  SETTLED=$SETTLE_S
  for ((i = 0; i < SETTLE_S; i++)); do
    a=$(machine_ticks)
    sleep 1
    b=$(machine_ticks)
    SETTLE_BUSY=$(awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ")
      d = y[1] - x[1]; printf "%.1f", (d > 0 ? 100 * (y[3] - x[3]) / d : 0) }')
    if awk -v u="$SETTLE_BUSY" -v t="$NOISY_PCT" 'BEGIN { exit !(u < t) }'; then
      SETTLED=$((i + 1))
      return 0
    fi
  done
}

# metric FILE SERIES: the value of one sample of a scrape (`name{labels}`), as an integer;
# empty if absent.
metric() {
  awk -v s="$2" '$1 == s { printf "%.0f\n", $2; found = 1; exit } END { if (!found) exit 1 }' "$1" || true
}

# ---- the machine, the software and the request -----------------------------------

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

write_send_body "$tmp/body.json" "$TEXT_BYTES" "posthorn benchmark: a 1 KB text email"
body_bytes=$(stat -c %s "$tmp/body.json")
write_post_lua "$tmp/body.json" "$tmp/post.lua"

# ---- the servers -------------------------------------------------------------------

# remember NAME: keeps what start_posthorn_with_verified_domain set for NAME.
remember() {
  ph_pids[$1]=$ph_pid
  urls[$1]=$ph_url
  auths[$1]=$auth
  logs[$1]=$ph_log
  dbs[$1]=$db
  ph_pid=
}
# use NAME: points api (bench/lib.sh) at the posthorn NAME.
use() {
  base=${urls[$1]%/v1/emails}
  auth=${auths[$1]}
}
# first_send NAME: one send with curl, answered 200, readable and QUEUED (delivery is held).
first_send() {
  local code id st
  use "$1"
  code=$(api POST /v1/emails "$tmp/send.json" "$(cat "$tmp/body.json")")
  id=$(jfield "$tmp/send.json" id)
  [[ $code == 200 && $id == em_* ]] || die "$1: POST /v1/emails answered $code: $(head -c 500 "$tmp/send.json")"
  code=$(api GET "/v1/emails/$id" "$tmp/first.json")
  st=$(jfield "$tmp/first.json" status)
  [[ $code == 200 && $st == QUEUED ]] ||
    die "$1: GET /v1/emails/$id answered $code, status ${st:-?} (QUEUED expected: delivery is held): $(head -c 500 "$tmp/first.json")"
  acc_extra[$1]=$((${acc_extra[$1]:-0} + 1))
}
# metrics_code NAME OUT: the status of GET /metrics on NAME (from 127.0.0.1: a trusted
# network by default), the body to OUT.
metrics_code() {
  curl -s -o "$2" -w '%{http_code}' --max-time 30 "${urls[$1]%/v1/emails}/metrics" || echo 000
}

ph_extra_env=("POSTHORN_METRICS_ENABLED=true")
start_posthorn_with_verified_domain on
remember on
ph_extra_env=("POSTHORN_METRICS_ENABLED=false")
start_posthorn_with_verified_domain off
remember off
first_send on
first_send off
code=$(metrics_code on "$tmp/scrape-start.txt")
[[ $code == 200 ]] || die "GET /metrics on the server with metrics on answered $code: $(head -c 300 "$tmp/scrape-start.txt")"
[[ -n $(metric "$tmp/scrape-start.txt" 'posthorn_emails_accepted_total{door="api"}') ]] ||
  die "GET /metrics has no posthorn_emails_accepted_total{door=\"api\"}"
code=$(metrics_code off "$tmp/scrape-off-start.txt")
[[ $code == 404 ]] || die "GET /metrics on the server with metrics off answered $code, not 404"

# ---- measure -----------------------------------------------------------------------

noisy=()
problems=()
touch_free_memory
settle
say "the machine was ${SETTLE_BUSY}% busy after ${SETTLED}s of waiting for it to settle"
say "warm-up: ${WARMUP}s each"
run_wrk on warmup-on "$WARMUP"
run_wrk off warmup-off "$WARMUP"

declare -A res quiet
for ((r = 1; r <= ROUNDS; r++)); do
  if ((r % 2)); then order=(off on); else order=(on off); fi
  for n in "${order[@]}"; do
    say "round $r/$ROUNDS: metrics $n (${DURATION}s)"
    run_wrk "$n" "r$r-$n" "$DURATION"
    res[$n,$r]=$W
    read -r rps p50 p99 _ n2 se cpu st ot <<<"$W"
    note_noise "round $r, metrics $n" "$st" "$ot"
    if awk -v a="$st" -v b="$ot" -v t="$NOISY_PCT" 'BEGIN { exit !(a > t || b > t) }'; then
      quiet[$r]=0
    else
      quiet[$r]=${quiet[$r]:-1}
    fi
    say "  $(int "$rps") sends/s, p50 $(ms "$p50") ms, p99 $(ms "$p99") ms, CPU $(ms "$cpu") ms/send; noise $st% / $ot%; non-2xx $n2, socket errors $se"
  done
done

# ---- the scrape, the counts --------------------------------------------------------

sleep 1 # the requests in flight when the last run ended, and their group commit
scrape_s=$(curl -s -o "$tmp/scrape.txt" -w '%{http_code} %{time_total}' --max-time 30 "${urls[on]%/v1/emails}/metrics" || echo "000 0")
read -r scrape_code scrape_time <<<"$scrape_s"
scrape_bytes=$(stat -c %s "$tmp/scrape.txt" 2>/dev/null || echo 0)
scrape_series=$(grep -vc '^#' "$tmp/scrape.txt" || true)
accepted=$(metric "$tmp/scrape.txt" 'posthorn_emails_accepted_total{door="api"}')
accepted_smtp=$(metric "$tmp/scrape.txt" 'posthorn_emails_accepted_total{door="smtp"}')
post_200=$(metric "$tmp/scrape.txt" 'posthorn_http_requests_total{method="POST",code="200"}')
rows_on=$(sqlite3 "${dbs[on]}" '.timeout 10000' 'SELECT COUNT(*) FROM emails;')
off_code=$(metrics_code off "$tmp/scrape-off.txt")
wrk_200_on=$((acc_req[on] - acc_n2[on]))
expect_lo=$((wrk_200_on + acc_extra[on]))
expect_hi=$((expect_lo + acc_conn[on]))

if [[ $scrape_code != 200 || -z $accepted ]]; then
  problems+=("GET /metrics on \"on\" after the runs answered $scrape_code, posthorn_emails_accepted_total{door=\"api\"} = ${accepted:-absent}")
  accepted=
else
  ((accepted == rows_on)) ||
    problems+=("posthorn_emails_accepted_total{door=\"api\"} = $accepted, but \"on\" stored $rows_on emails")
  ((accepted >= expect_lo && accepted <= expect_hi)) ||
    problems+=("posthorn_emails_accepted_total{door=\"api\"} = $accepted, outside [$expect_lo, $expect_hi] (the 200s wrk counted + curl's sends, + the requests in flight at run ends)")
  [[ ${accepted_smtp:-0} == 0 ]] || problems+=("posthorn_emails_accepted_total{door=\"smtp\"} = $accepted_smtp with no SMTP session")
fi
[[ $off_code == 404 ]] || problems+=("GET /metrics on \"off\" answered $off_code, not 404")

# check_store NAME ROWS_LIVE: waits for the posthorn NAME to stop (SIGTERM sent already) and
# checks its store against what wrk saw, as bench/send_emails.sh does; ROWS_LIVE: its emails
# before the SIGTERM. Sets ck[NAME] to a line of the report and adds to problems.
declare -A ck
check_store() {
  local n=$1 rows_live rows log_status log_200 warn answered max dbf=${dbs[$1]}
  rows_live=${2:?}
  # SIGTERM went to both at once (a second one, as term_then_kill would send, cuts the drain short).
  wait_gone "${ph_pids[$n]}" 45 || true
  stop_posthorn_pid "${ph_pids[$n]}"
  ph_pids[$n]=
  [[ $ph_exit == 0 ]] || problems+=("\"$n\" exited with status $ph_exit after SIGTERM")
  rows=$(sqlite3 "$dbf" '.timeout 10000' 'SELECT COUNT(*) FROM emails;')
  log_status=$(sqlite3 "$dbf" '.timeout 10000' \
    "SELECT status || ': ' || COUNT(*) FROM request_logs WHERE method = 'POST' AND url = '/v1/emails' GROUP BY status ORDER BY status;" | paste -sd, - | sed 's/,/, /g')
  log_200=$(sqlite3 "$dbf" '.timeout 10000' \
    "SELECT COUNT(*) FROM request_logs WHERE method = 'POST' AND url = '/v1/emails' AND status = 200;")
  warn=$(grep -Ec ' (warning|warn|error|critical) ' "${logs[$n]}" || true)
  answered=$((acc_req[$n] - acc_n2[$n] + acc_extra[$n]))
  max=$((answered + acc_conn[$n]))
  ((acc_n2[$n] == 0)) || problems+=("\"$n\": wrk saw ${acc_n2[$n]} non-2xx/3xx responses (request log, POST /v1/emails by status: $log_status)")
  ((acc_se[$n] == 0)) || problems+=("\"$n\": wrk saw ${acc_se[$n]} socket errors")
  ((rows >= answered)) || problems+=("\"$n\": emails lost: $rows rows in emails for $answered sends answered 200")
  ((rows <= max)) || problems+=("\"$n\": $rows rows in emails, more than the $max sends that can have been answered 200")
  ((rows == rows_live)) || problems+=("\"$n\": emails held $rows_live rows before the shutdown and $rows after it")
  ((log_200 == rows)) || problems+=("\"$n\": the request log has $log_200 POST /v1/emails answered 200 for $rows emails")
  ((warn == 0)) || problems+=("\"$n\": $warn warning/error lines in the server log")
  ck[$n]="$(printf "%'d" "$rows") emails for $(printf "%'d" "$answered") sends answered 200 ($((acc_req[$n] - acc_n2[$n])) counted by wrk, warm-up included, + ${acc_extra[$n]} with curl; $((rows - answered)) in flight at run ends); request log, POST /v1/emails by status: ${log_status:-none}"
}
held=$(held_sessions)
live_off=$(sqlite3 "${dbs[off]}" '.timeout 10000' 'SELECT COUNT(*) FROM emails;')
say "stopping both posthorns (SIGTERM)"
kill -TERM "${ph_pids[on]}" "${ph_pids[off]}" 2>/dev/null || true
check_store on "$rows_on"
check_store off "$live_off"
stop_dnsmasq
stop_hold

# ---- report ------------------------------------------------------------------------

# field NAME K: the K-th field (1-based) of W of every round of NAME.
field() {
  local r
  for ((r = 1; r <= ROUNDS; r++)); do awk -v k="$2" '{ print $k }' <<<"${res[$1,$r]}"; done
}
# spread VALUES...: (max - min) / median, in %.
spread() {
  local med
  med=$(median "$@")
  printf '%s\n' "$@" | sort -g | awk -v m="$med" 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.1f", (m > 0 ? 100 * (hi - lo) / m : 0) }'
}
mapfile -t on_rps < <(field on 1)
mapfile -t off_rps < <(field off 1)
med_on=$(median "${on_rps[@]}")
med_off=$(median "${off_rps[@]}")
# medf NAME K: the median of field K over the rounds of NAME.
medf() {
  local vals
  mapfile -t vals < <(field "$1" "$2")
  median "${vals[@]}"
}
med_on_p50=$(medf on 2)
med_off_p50=$(medf off 2)
med_on_p99=$(medf on 3)
med_off_p99=$(medf off 3)
med_on_cpu=$(medf on 7)
med_off_cpu=$(medf off 7)
ratio=$(calc "$med_on / $med_off")
ratios=()
for ((r = 1; r <= ROUNDS; r++)); do ratios+=("$(calc "${on_rps[r - 1]} / ${off_rps[r - 1]}")"); done
med_round_ratio=$(median "${ratios[@]}")
noise_off=$(spread "${off_rps[@]}")
noise_on=$(spread "${on_rps[@]}")
diff_pct=$(fmt '%+.1f' "$(calc "100 * ($ratio - 1)")")
# The undisturbed rounds: their medians, ratio and spread.
q_on=()
q_off=()
q_rounds=()
for ((r = 1; r <= ROUNDS; r++)); do
  [[ ${quiet[$r]} == 1 ]] || continue
  q_rounds+=("$r")
  q_on+=("${on_rps[r - 1]}")
  q_off+=("${off_rps[r - 1]}")
done
nq=${#q_rounds[@]}
if ((nq > 0)); then
  q_ratio=$(calc "$(median "${q_on[@]}") / $(median "${q_off[@]}")")
  q_diff_pct=$(fmt '%+.1f' "$(calc "100 * ($q_ratio - 1)")")
  q_noise_off=$(spread "${q_off[@]}")
  q_noise_on=$(spread "${q_on[@]}")
fi
# within DIFF_PCT NOISE_PCT: true when |DIFF| <= NOISE.
within() { awk -v d="$1" -v n="$2" 'BEGIN { d = d < 0 ? -d : d; exit !(d <= n) }'; }
if ((nq >= 3 && nq < ROUNDS)); then
  v_basis="the $nq undisturbed rounds (${q_rounds[*]})"
  v_diff=$q_diff_pct
  v_noise=$q_noise_off
else
  v_basis="all $ROUNDS rounds"
  v_diff=$diff_pct
  v_noise=$noise_off
fi
if within "$v_diff" "$v_noise"; then
  verdict="**within the noise** ($v_basis): the median with metrics on is $v_diff% from the median without; the rounds without metrics spread over $v_noise% of their median."
else
  verdict="**not within the noise** ($v_basis): the median with metrics on is $v_diff% from the median without, more than the $v_noise% over which the rounds without metrics spread."
fi
r3() { fmt '%.3f' "$1"; }

section="$tmp/section.md"
{
  echo "## Metrics (issue 28): durable \`POST /v1/emails\` with metrics on vs off"
  echo
  echo "Generated by \`bench/metrics.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC')."
  echo
  echo "- Machine: $nproc_n CPUs, $cpu_model; $os_name, kernel $(uname -r); load average $load_at_start at the start."
  echo "- Disk: both data dirs on $disk ($fs_type)."
  memory_line
  echo "- Software: posthorn $ph_commit (\`$PH_BIN\`, sha256 $ph_sha…), wrk $wrk_version, dnsmasq $dns_version."
  echo "- Two posthorns set up alike, as bench/send_emails.sh sets up one (fresh data dir, SQLite, one key,"
  echo "  $DOMAIN verified against dnsmasq, \`POSTHORN_LIMITS_SEND_RATE_PER_MINUTE=$SEND_RATE\`, delivery held"
  echo "  by a loopback relay that never answers: acceptance alone; $held sessions held at the end), except"
  echo "  \`POSTHORN_METRICS_ENABLED=true\` (\"on\") vs \`false\` (\"off\": nothing is counted, \`GET /metrics\` 404)."
  echo "  Both run throughout; the one not loaded idles."
  echo "- Load: \`wrk --latency -t$THREADS -c$CONNECTIONS -d${DURATION}s -s post.lua\` (the $body_bytes-byte POST of bench/send_emails.sh),"
  echo "  client and servers on the same $nproc_n CPUs; $ROUNDS rounds, off first in odd rounds and on first in even ones,"
  echo "  after ${WARMUP}s of warm-up each and a wait for the machine to settle (${SETTLED}s, then ${SETTLE_BUSY}% busy)."
  echo "  No scrape during the runs: this is the cost of counting."
  echo
  echo "Reproduce: \`ROUNDS=$ROUNDS bench/run.sh metrics\` with the binary built."
  echo
  echo "Latencies in ms; CPU = server CPU time per send, in ms; noise = CPU steal / CPU of processes other"
  echo "than the loaded server and wrk, in % of the machine, during the run."
  echo
  echo "| round | off sends/s | p50 | p99 | CPU | noise | on sends/s | p50 | p99 | CPU | noise | on/off |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for ((r = 1; r <= ROUNDS; r++)); do
    read -r a_rps a_p50 a_p99 _ _ _ a_cpu a_st a_ot <<<"${res[off,$r]}"
    read -r b_rps b_p50 b_p99 _ _ _ b_cpu b_st b_ot <<<"${res[on,$r]}"
    echo "| $r | $(int "$a_rps") | $(ms "$a_p50") | $(ms "$a_p99") | $(ms "$a_cpu") | $a_st% / $a_ot% |" \
      "$(int "$b_rps") | $(ms "$b_p50") | $(ms "$b_p99") | $(ms "$b_cpu") | $b_st% / $b_ot% | $(r3 "${ratios[r - 1]}") |"
  done
  echo "| **median** | **$(int "$med_off")** | $(ms "$med_off_p50") | **$(ms "$med_off_p99")** | $(ms "$med_off_cpu") | |" \
    "**$(int "$med_on")** | $(ms "$med_on_p50") | **$(ms "$med_on_p99")** | $(ms "$med_on_cpu") | | **$(r3 "$ratio")** |"
  echo
  echo "Medians, on/off: sends/s **$(r3 "$ratio")×** (the median of the rounds' ratios: $(r3 "$med_round_ratio")×),"
  echo "p99 $(r3 "$(calc "$med_on_p99 / $med_off_p99")")×, CPU per send $(r3 "$(calc "$med_on_cpu / $med_off_cpu")")×."
  echo "Noise, the spread of the rounds' sends/s, (max - min) / median: off $noise_off%, on $noise_on%."
  if ((nq > 0 && nq < ROUNDS)); then
    echo "The $nq undisturbed rounds (${q_rounds[*]}: steal and other processes at most $NOISY_PCT% in both runs): on/off"
    echo "$(r3 "$q_ratio")× ($q_diff_pct%), spread off $q_noise_off%, on $q_noise_on%."
  elif ((nq == 0)); then
    echo "No round was undisturbed (steal or other processes above $NOISY_PCT% in one of its runs)."
  fi
  echo
  echo "Verdict: $verdict"
  echo
  if [[ ${#noisy[@]} -gt 0 ]]; then
    echo "Disturbed runs (steal or other processes above $NOISY_PCT% of the machine; their figures"
    echo "understate what the machine can do): $(printf '%s; ' "${noisy[@]}" | sed 's/; $//')."
    echo
  fi
  if [[ -n $accepted ]]; then
    echo "The counting is real: \`GET /metrics\` of \"on\" after the runs ($(fmt '%.1f' "$(calc "$scrape_time * 1000")") ms, $scrape_bytes bytes, $scrape_series samples)"
    echo "gave \`posthorn_emails_accepted_total{door=\"api\"}\` = **$(printf "%'d" "$accepted")**: the emails in its store, $(printf "%'d" "$rows_on");"
    echo "the 200s wrk counted, $(printf "%'d" "$wrk_200_on"), + ${acc_extra[on]} sent with curl + $((accepted - expect_lo)) in flight when runs ended"
    echo "(wrk does not count those; at most ${acc_conn[on]}). \`posthorn_http_requests_total{method=\"POST\",code=\"200\"}\` = ${post_200:-absent}"
    echo "(the sends and the domain's verify). \"off\" answered \`GET /metrics\` with $off_code."
  else
    echo "\`GET /metrics\` of \"on\" after the runs answered $scrape_code: the counts could not be checked."
  fi
  echo
  echo "Stores after SIGTERM: on, ${ck[on]}; off, ${ck[off]}."
  echo
  if [[ ${#problems[@]} -gt 0 ]]; then
    echo "**Problems observed in this run:**"
    echo
    for p in "${problems[@]}"; do echo "- $p"; done
  else
    echo "No problems observed: no non-2xx responses, no socket errors, no warnings in either server's log."
  fi
} >"$section"

echo
cat "$section"
echo

[[ -z $RESULTS ]] || write_results_section metrics "$section"

if [[ ${#problems[@]} -gt 0 ]]; then
  say "posthorn misbehaved during the benchmark:"
  for p in "${problems[@]}"; do say "  - $p"; done
  for n in on off; do
    if grep -qE ' (warning|warn|error|critical) ' "${logs[$n]}"; then
      say "\"$n\" log (warnings and errors, first 10):"
      grep -E ' (warning|warn|error|critical) ' "${logs[$n]}" | head -n 10 >&2 || true
    fi
  done
  exit 1
fi
