#!/usr/bin/env bash
# Runs one fuzz target with its dictionary and the campaign's limits:
#   fuzz/run.sh <target> [seconds, default 600] [extra libFuzzer flags...]
# Findings land in fuzz/artifacts/<target>/; the log in fuzz/logs/<target>.log.
set -euo pipefail
cd "$(dirname "$0")"
target=$1
seconds=${2:-600}
shift $(( $# < 2 ? $# : 2 ))
case $target in
  json|lsp) dict=dict/jsonrpc.dict ;;
  stage_template|lastlight_template|c3l|render) dict=dict/mustache.dict ;;
  check) dict=dict/check.dict ;;
  *) dict=dict/yaml.dict ;;
esac
mkdir -p "corpus/$target" logs
# `-s none`: the library is safe Rust, and without AddressSanitizer each input runs faster;
# debug assertions catch overflow and `Span::new`'s order check.
exec cargo +nightly fuzz run -s none --debug-assertions ${FUZZ_TARGET_DIR:+--target-dir "$FUZZ_TARGET_DIR"} "$target" -- \
  -dict="$dict" -rss_limit_mb=512 -timeout=1 -max_total_time="$seconds" -print_final_stats=1 "$@" \
  2>&1 | tee "logs/$target.log"
