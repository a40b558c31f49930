#!/usr/bin/env bash
# Installs the Debian packages posthorn needs to build, run and test (DESIGN §10).
# Quiet when everything is present; uses sudo when not root. Debian 12 (bookworm).
#   scripts/install-deps.sh           build + run + test packages
#   scripts/install-deps.sh --bench   also the benchmark peers and clients (wrk, h2load, nginx, postfix)
#   scripts/install-deps.sh --fuzz    also clang and libFuzzer (make fuzz)
set -euo pipefail

packages=(
  # build
  build-essential cmake ninja-build ccache pkg-config clang-format clang-tidy
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev libboost-system1.81-dev
  libsqlite3-dev libpq-dev libgmime-3.0-dev libc-ares-dev libssl-dev libcurl4-openssl-dev
  libsimdjson-dev libgumbo-dev libjemalloc-dev libspdlog-dev libfmt-dev libtomlplusplus-dev libcli11-dev libidn2-dev
  libspf2-dev libopendkim-dev libopendmarc-dev publicsuffix  # inbound SPF, DKIM, DMARC (mail/auth.cpp)
  libkainjow-mustache-dev  # stored templates (mail/template.cpp; not libmstch-dev: docs/templates.md)
  libgtest-dev libgmock-dev
  # run (make run prints a curl line) and test
  curl sqlite3 python3 python3-pytest python3-aiosmtpd python3-dkim python3-cryptography dnsmasq-base swaks
  python3-psycopg2  # the integration tests' reads of a PostgreSQL store (tests/support/store.py)
  python3-prometheus-client  # a real parser of GET /metrics in the tests
  chromium chromium-driver python3-selenium  # the dashboard's browser tests (docs/testing.md)
  python3-spf  # a real SPF check (pyspf, over python3-dnspython) of the custom return path
  spamassassin  # its local tests read the header block of delivered mail (test_headers.py)
  libnet-ssleay-perl  # swaks's STARTTLS (a Recommends of swaks, which --no-install-recommends skips)
  openssl postfix  # postfix for its smtp-source load client (the daemon is not configured)
  postgresql-15  # the server the PostgreSQL tests start (tools/pg_test_server.py); pg_trgm is in it
  nsd unbound ldnsutils  # DANE tests: a signed zone (ldns-signzone) on nsd behind a validating unbound
  # the package test (tests/package): systemd-analyze verify of the unit, /bin/kill of its
  # ExecReload; make deb's dpkg-shlibdeps comes with build-essential (dpkg-dev)
  systemd procps
)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
if [[ "${1:-}" == "--bench" ]]; then
  packages+=(wrk nginx-light postfix nghttp2-client)
fi
if [[ "${1:-}" == "--fuzz" ]]; then
  packages+=(clang-14 libclang-rt-14-dev)
fi

# One dpkg-query for all (one a package took seconds: every make target runs this).
declare -A installed=()
while read -r status name; do
  [[ "$status" == "installed" ]] && installed[$name]=1
done < <(dpkg-query -W -f='${db:Status-Status} ${Package}\n' "${packages[@]}" 2>/dev/null || true)
missing=()
for p in "${packages[@]}"; do
  [[ -n "${installed[$p]:-}" ]] || missing+=("$p")
done
# Node test clients (nodemailer, standardwebhooks, swagger-parser and ajv) from the npm
# registry, into tests/node/node_modules; installed when any of them is missing.
install_node_clients() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/node"
  [[ -d "$dir/node_modules/nodemailer" && -d "$dir/node_modules/standardwebhooks" &&
     -d "$dir/node_modules/@apidevtools/swagger-parser" && -d "$dir/node_modules/ajv-formats" ]] &&
    return 0
  command -v npm >/dev/null 2>&1 || return 0
  echo "install-deps: installing the node test clients (npm)"
  npm install --prefix "$dir" --no-package-lock --no-audit --no-fund --loglevel=error >/dev/null
}

# The dashboard's npm packages (web/package-lock.json, docs/dashboard.md), which the build
# bundles: `npm ci` when web/node_modules is missing or older than the lock file.
install_web_packages() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/web"
  [[ -f "$dir/package-lock.json" ]] || return 0
  [[ -d "$dir/node_modules" && "$dir/node_modules" -nt "$dir/package-lock.json" ]] && return 0
  command -v npm >/dev/null 2>&1 || return 0
  echo "install-deps: installing the dashboard's npm packages (npm ci --prefix web)"
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >/dev/null
  mkdir -p "$dir/node_modules" && touch "$dir/node_modules"
}

if [[ ${#missing[@]} -eq 0 ]]; then
  install_node_clients
  install_web_packages
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=()
[[ $(id -u) -eq 0 ]] || sudo=(sudo)
export DEBIAN_FRONTEND=noninteractive
# postfix asks questions at install time; answer them up front.
if printf '%s\n' "${missing[@]}" | grep -qx postfix; then
  echo "postfix postfix/main_mailer_type select No configuration" | "${sudo[@]}" debconf-set-selections
fi
# nsd and unbound are run by the tests on ports of their own: their packages must not start
# the system services on port 53, where both would want to listen (nsd's install fails when
# it cannot start outside systemd). Unless the host already has a policy (containers do),
# one that forbids starting those two is in place for the install (invoke-rc.d(8)).
policy=/usr/sbin/policy-rc.d
own_policy=0
if [[ ! -e $policy ]]; then
  printf '#!/bin/sh\ncase "$1" in nsd|unbound) exit 101;; esac\nexit 0\n' |
    "${sudo[@]}" tee "$policy" >/dev/null
  "${sudo[@]}" chmod 755 "$policy"
  own_policy=1
fi
status=0
"${sudo[@]}" apt-get update -qq || status=$?
[[ $status -ne 0 ]] ||
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || status=$?
[[ $own_policy -eq 0 ]] || "${sudo[@]}" rm -f "$policy"
[[ $status -eq 0 ]] || exit "$status"
install_node_clients
install_web_packages
