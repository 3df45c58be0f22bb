#!/usr/bin/env bash
# Runs every benchmark's default cases (bench/*/run.sh BUILD_DIR) and collects their JSON lines
# in BUILD_DIR/bench-results/<name>.jsonl.
set -euo pipefail
build=${1:-build}
build=$(cd "$build" && pwd)
out="$build/bench-results"
mkdir -p "$out"
cd "$(dirname "$0")"
for script in */run.sh; do
  name=$(dirname "$script")
  echo "== bench $name" >&2
  bash "$script" "$build" | tee "$out/$name.jsonl"
done
echo "results in $out" >&2
