#!/usr/bin/env bash
# Benchmark (issue 31): GET /v1/stats on a SQLite store of $EMAILS emails, against its peer: the
# same question answered by a GROUP BY scan of the emails table, on the same file (sqlite3's
# library, through Python's sqlite3 module, as bench/stats_load.py runs it).
#
# What one run does:
#   1. dnsmasq, posthorn on a fresh data dir, one account and key, mail.example.com verified
#      (start_posthorn_with_verified_domain, bench/lib.sh); then posthorn is stopped;
#   2. $EMAILS emails are written straight into its store with sqlite3 (one INSERT … SELECT,
#      not $EMAILS sends: the sends' own cost is the send_emails section's), spread evenly
#      over the last 29.5 days: 85% DELIVERED, 5% BOUNCED, 2% FAILED, 3% BLOCKED, 1%
#      COMPLAINED, 4% still SENT; 30% of the delivered opened, 4% clicked; one in ten tagged
#      campaign:spring. Their counters are then made by migration 028's own backfill
#      statement (the one that counts the emails stored before it), which keeps the same
#      counters as the live path would have (contract and integration tests check that path);
#   3. posthorn starts again on that store, and bench/stats_load.py asks GET /v1/stats
#      ($RUNS times after 2 warm-ups, one keep-alive connection) for the default windows (30
#      days by day, 24 hours by hour), plain, with domain= and with tag=; and runs the peer's
#      GROUP BY for the same window (a quarter as many times: it is slow) and checks that
#      both give the same totals;
#   4. stops posthorn, prints a markdown section and replaces the stats section of $RESULTS.
#
# Options (environment): EMAILS=1000000 RUNS=20 PH_BIN=build/posthorn RESULTS=bench/RESULTS.md
#   (empty: do not write it) NOTE="..." (a line added to the results, e.g. about noise) KEEP_TMP=1.
# Exit status: 0 ok; 1 posthorn misbehaved (or the totals differ); 2 bad usage or a missing tool.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=bench/lib.sh
source bench/lib.sh

EMAILS=${EMAILS:-1000000}
RUNS=${RUNS:-20}
PH_BIN=${PH_BIN:-build/posthorn}
RESULTS=${RESULTS-bench/RESULTS.md}
SEND_RATE=100000000
DOMAIN=mail.example.com
DKIM_ZONE=dkim.posthorn.test
SPF_INCLUDE=spf.posthorn.test
INBOUND_MX=mx.posthorn.test

say() { printf '[stats] %s\n' "$*" >&2; }
for v in EMAILS RUNS; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer (got '${!v}')" 2
done

missing=()
for tool in sqlite3 curl timeout awk; do
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

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
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
sqlite_version=$("$PY" -c 'import sqlite3; print(sqlite3.sqlite_version)')
problems=()
load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
start_posthorn_with_verified_domain
account_id=$(sqlite3 "$db" "SELECT id FROM accounts WHERE name = 'bench'")
domain_id=$(sqlite3 "$db" "SELECT id FROM domains WHERE name = '$DOMAIN'")
[[ -n $account_id && -n $domain_id ]] || die "no account or domain in $db"
stop_posthorn
[[ $ph_exit == 0 ]] || problems+=("posthorn exited $ph_exit on SIGTERM (before the load)")

# ---- the load ----------------------------------------------------------------------

now_ms=$(($(date +%s) * 1000))
t0=$((now_ms - 2548800000)) # 29.5 days ago
span=2548800000
say "loading $EMAILS emails into $db"
load_start=$(date +%s.%N)
sqlite3 "$db" <<SQL
PRAGMA synchronous = OFF;
BEGIN;
WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < $EMAILS - 1),
  r(i, at, st) AS (
    SELECT i, $t0 + i * $span / $EMAILS,
           CASE WHEN i % 100 < 85 THEN 'DELIVERED' WHEN i % 100 < 90 THEN 'BOUNCED'
                WHEN i % 100 < 92 THEN 'FAILED' WHEN i % 100 < 95 THEN 'BLOCKED'
                WHEN i % 100 < 96 THEN 'COMPLAINED' ELSE 'SENT' END
      FROM c)
INSERT INTO emails (id, account_id, domain_id, status, from_email, to_display, subject,
                    message_id, return_token, created_at, queued_at, sent_at, delivered_at,
                    failed_at, opened_at, clicked_at, updated_at, tags, total_recipients)
SELECT printf('em_bench%018d', i), '$account_id', '$domain_id', st, 'bench@$DOMAIN',
       'user@example.net', 'Bench', printf('m%d@bench', i), printf('t%025d', i), at, at,
       CASE WHEN st IN ('DELIVERED', 'COMPLAINED', 'SENT') THEN at + 1000 END,
       CASE WHEN st IN ('DELIVERED', 'COMPLAINED') THEN at + 2000 END,
       CASE WHEN st IN ('BOUNCED', 'FAILED', 'BLOCKED') THEN at + 5000 END,
       CASE WHEN st = 'DELIVERED' AND i % 10 < 3 THEN at + 60000 END,
       CASE WHEN st = 'DELIVERED' AND i % 25 = 0 THEN at + 90000 END,
       at + 10000,
       CASE WHEN i % 10 = 1 THEN 'campaign=spring' END, 1
  FROM r;
INSERT INTO email_tags (account_id, name, value, email_id)
SELECT account_id, 'campaign', 'spring', id FROM emails
 WHERE account_id = '$account_id' AND tags = 'campaign=spring';
UPDATE email_counts SET n = n + $EMAILS WHERE account_id = '$account_id';
COMMIT;
SQL
load_end=$(date +%s.%N)
counters_start=$load_end
{
  echo "PRAGMA synchronous = OFF;"
  echo "BEGIN;"
  echo "DELETE FROM stat_counters;"
  sed -n '/^CREATE TEMP TABLE stat_facts/,$p' src/store/migrations/sqlite/028_stat_counters.sql
  echo "COMMIT;"
} | sqlite3 "$db"
counters_end=$(date +%s.%N)
load_s=$(fmt '%.1f' "$(calc "$load_end - $load_start")")
counters_s=$(fmt '%.1f' "$(calc "$counters_end - $counters_start")")
emails_rows=$(sqlite3 "$db" "SELECT COUNT(*) FROM emails")
counter_rows=$(sqlite3 "$db" "SELECT COUNT(*) FROM stat_counters")
db_mb=$(du -sm "$db" | cut -f1)
say "loaded $emails_rows emails in $load_s s; $counter_rows counters in $counters_s s; ${db_mb} MB"
((emails_rows >= EMAILS)) || problems+=("$emails_rows emails in the store, $EMAILS expected")

# ---- the questions -----------------------------------------------------------------

ph_serve
m0=$(machine_ticks)
c0=$(cpu_ticks "$ph_pid")
if ! bounded 1800 "$tmp/load.json" "$tmp/load.err" "$PY" bench/stats_load.py --port "$ph_port" \
  --key "$key" --db "$db" --account "$account_id" --domain "$DOMAIN" --domain-id "$domain_id" \
  --runs "$RUNS"; then
  cat "$tmp/load.json" "$tmp/load.err" >&2
  die "the stats client failed"
fi
c1=$(cpu_ticks "$ph_pid")
m1=$(machine_ticks)
noise=$(noise_between "$m0" "$m1" "$((c1 - c0))")
cat "$tmp/load.json" >&2
stop_posthorn
[[ $ph_exit == 0 ]] || problems+=("posthorn exited $ph_exit on SIGTERM")

rows_table=()
while read -r line; do
  [[ -n $line ]] || continue
  interval=$(jfield <(echo "$line") interval)
  filter=$(jfield <(echo "$line") filter)
  buckets=$(jfield <(echo "$line") buckets)
  h50=$(jfield <(echo "$line") http_p50_ms)
  h90=$(jfield <(echo "$line") http_p90_ms)
  p50=$(jfield <(echo "$line") peer_p50_ms)
  same=$(jfield <(echo "$line") same_totals)
  accepted=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["totals"]["accepted"])' "$line")
  [[ $same == True || $same == true ]] || problems+=("$interval/$filter: the totals differ from the peer's: $line")
  rows_table+=("| $interval | $filter | $buckets | $accepted | $h50 | $h90 | $p50 | $(fmt '%.0f' "$(calc "$p50 / $h50")")× | $same |")
done <"$tmp/load.json"

section="$tmp/section.md"
{
  echo "## Stats (issue 31): \`GET /v1/stats\` from counters vs a GROUP BY scan of $EMAILS emails"
  echo
  echo "Generated by \`bench/stats.sh\` on $(date -u '+%Y-%m-%d %H:%M') UTC."
  echo
  echo "- Machine: $(nproc) CPUs, $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); kernel $(uname -r); load average $load_at_start at the start; noise during the questions (steal / other processes) $noise%."
  [[ -z ${NOTE:-} ]] || echo "- **Note: $NOTE**"
  echo "- Software: posthorn $ph_commit (\`$PH_BIN\`, sha256 $ph_sha…), Python $py_version (the client), SQLite $sqlite_version (the peer, Python's module), dnsmasq $dns_version."
  echo "- The store: SQLite, $emails_rows emails of one account written straight into it with sqlite3 in $load_s s"
  echo "  (85% DELIVERED, 5% BOUNCED, 2% FAILED, 3% BLOCKED, 1% COMPLAINED, 4% SENT over the last 29.5 days; 30% of"
  echo "  the delivered opened, 4% clicked; one in ten tagged campaign:spring), then their $counter_rows counters made in"
  echo "  $counters_s s by migration 028's backfill statement; ${db_mb} MB."
  echo "- posthorn: the default windows (30 days by the day, 24 hours by the hour), $RUNS requests each after 2 warm-ups over"
  echo "  one keep-alive connection (\`bench/stats_load.py\`): latency from the request sent to the answer read."
  echo "- The peer: the same counts by a GROUP BY over the emails' rows (each event in its bucket; the tag through"
  echo "  email_tags), run $((RUNS / 4 > 3 ? RUNS / 4 : 3)) times on the same file after one warm-up; its totals checked equal to posthorn's."
  echo
  echo "| interval | filter | buckets | accepted | stats p50 ms | stats p90 ms | peer p50 ms | peer/stats | same totals |"
  echo "|---|---|---:|---:|---:|---:|---:|---:|---|"
  printf '%s\n' "${rows_table[@]}"
  echo
  if ((${#problems[@]})); then
    echo "Problems:"
    printf -- '- %s\n' "${problems[@]}"
    echo
  fi
  echo "Reproduce: \`EMAILS=$EMAILS RUNS=$RUNS bench/stats.sh\`."
} >"$section"
cat "$section"
[[ -z $RESULTS ]] || write_results_section stats "$section"
((${#problems[@]} == 0)) || exit 1
