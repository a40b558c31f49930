#!/usr/bin/env bash
# Coverage-guided fuzzing of the parsers of untrusted bytes (tests/fuzz/, docs/testing.md):
# builds the targets with clang, libFuzzer and AddressSanitizer into build-fuzz/, then runs
# each one for FUZZ_SECONDS, in turn, on a working corpus in build-fuzz/corpus/<target>
# seeded from tests/fuzz/corpus/<target> (the seeds in the repository are not touched).
# A crash leaves its input in build-fuzz/artifacts/<target>/ and ends the run with status 1.
#
#   make fuzz                      every target, 60 s each
#   FUZZ_SECONDS=600 make fuzz     longer
#   scripts/fuzz.sh api_json       one target (several: a list)
#
# UndefinedBehaviorSanitizer is left out: clang 14 cannot compile the project's coroutines
# with it and the fuzzer's coverage instrumentation together ("Cannot represent a
# difference across sections"); the GCC build runs UBSan over the same targets' smoke runs
# (`make test SANITIZE=address,undefined`).
set -euo pipefail
cd "$(dirname "$0")/.."

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
MAX_LEN=${MAX_LEN:-8192}
JOBS=${JOBS:-2}
all=(dns_wire smtp_command smtp_reply smtp_session address ip_address mime_parse dsn_parse api_json json_limits api_bodies http_request proxy_header api_query tracking_token bearer webhook_url track_html mta_sts_policy)
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all[@]}")

scripts/install-deps.sh --fuzz
CLANGXX=$(command -v clang++-14 || command -v clang++)
if [[ ! -f build-fuzz/build.ninja ]]; then
  CXX=$CLANGXX cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS=-gline-tables-only -DPH_SANITIZE=address -DPH_FUZZ=ON >/dev/null
fi
cmake --build build-fuzz -j "$JOBS" --target "${targets[@]/#/ph_fuzz_}"

status=0
for t in "${targets[@]}"; do
  corpus=build-fuzz/corpus/$t
  artifacts=build-fuzz/artifacts/$t
  mkdir -p "$corpus" "$artifacts"
  cp -n tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null || true
  echo "fuzz: $t for ${FUZZ_SECONDS}s"
  if ! build-fuzz/tests/fuzz/ph_fuzz_"$t" -max_total_time="$FUZZ_SECONDS" -max_len="$MAX_LEN" \
      -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" \
      "$corpus" > build-fuzz/fuzz-"$t".log 2>&1; then
    echo "fuzz: $t FAILED; the input is in $artifacts/, the log in build-fuzz/fuzz-$t.log"
    status=1
  else
    grep -E "^stat::number_of_executed_units" build-fuzz/fuzz-"$t".log | sed "s/^/fuzz: $t /"
  fi
done
exit $status
