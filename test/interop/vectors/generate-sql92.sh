#!/usr/bin/env bash
# Regenerates test/fixtures/vectors/sql92-<version>.json with Apache RocketMQ's own SQL92 filter
# (rocketmq-filter's SqlFilter), from the cases in sql92-cases.json. Uses the broker jars the
# interop suite fetches (test/interop/fetch-jars.sh → ${ROCKETWIRE_CACHE:-~/.cache/rocketwire}/rmq-<version>/lib).
# Usage: test/interop/vectors/generate-sql92.sh [version ...]   (default: 5.3.3)
# With ROCKETWIRE_VECTORS_OUT=DIR the file goes to DIR instead.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache=${ROCKETWIRE_CACHE:-$HOME/.cache/rocketwire}
out=${ROCKETWIRE_VECTORS_OUT:-$repo/test/fixtures/vectors}
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(5.3.3)
for v in "${versions[@]}"; do
  lib="$cache/rmq-$v/lib"
  [ -f "$lib/.complete" ] || "$repo/test/interop/fetch-jars.sh" "$v"
  cp=$(find "$lib" -name '*.jar' | sort | tr '\n' ':')
  classes=$(mktemp -d "${TMPDIR:-/tmp}/rocketwire-sql92gen-XXXXXX")
  javac -nowarn -Xlint:none -encoding UTF-8 -cp "$cp" -d "$classes" "$here/Sql92Vectors.java" 2>&1 | grep -v '^Note:' || true
  [ -f "$classes/Sql92Vectors.class" ] || { echo "javac failed for $v" >&2; exit 1; }
  mkdir -p "$out"
  java -Drocketmq.client.logUseSlf4j=false -cp "$classes:$cp" Sql92Vectors "$v" "$here/sql92-cases.json" "$out/sql92-$v.json"
  rm -rf "$classes"
  echo "sql92 vectors for $v written to $out/sql92-$v.json"
done
