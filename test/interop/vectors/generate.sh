#!/usr/bin/env bash
# Regenerates the golden vectors in test/fixtures/vectors/<version>/ and test/fixtures/acl/ with
# Apache RocketMQ's own classes. Needs a JDK (javac, java >= 11) and Maven; jars and classes go to
# a cache outside the repository: ${ROCKETWIRE_CACHE:-$HOME/.cache/rocketwire}/vectors-<version>/.
# Usage: test/interop/vectors/generate.sh [version ...]   (default: 4.9.8 5.3.3 5.5.0)
# With ROCKETWIRE_VECTORS_OUT=DIR the vectors go to DIR/<version>/ instead, and the committed
# fixtures are left alone (the interop suite compares the two).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache=${ROCKETWIRE_CACHE:-$HOME/.cache/rocketwire}
out=${ROCKETWIRE_VECTORS_OUT:-$repo/test/fixtures/vectors}
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(4.9.8 5.3.3 5.5.0)

for v in "${versions[@]}"; do
  dir="$cache/vectors-$v"
  start=$(date +%s)
  extra=()
  # 4.x ships AclClientRPCHook in rocketmq-acl; 5.3.3 has it in rocketmq-client (no acl artifact).
  # rocketmq-broker 4.9.8 is not served by Central: its ConsumerOffsetManager comes from 4.9.7.
  case "$v" in 4.9.8) extra=(-Dacl.module=true -Dbroker.version=4.9.7) ;; 4.*) extra=(-Dacl.module=true) ;; esac
  if [ ! -f "$dir/lib/.complete" ]; then
    rm -rf "$dir/lib"
    mvn -B -q -f "$here/pom.xml" "-Drmq.version=$v" "${extra[@]}" \
      org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
      -DincludeScope=runtime "-DoutputDirectory=$dir/lib"
    touch "$dir/lib/.complete"
  fi
  cp=$(find "$dir/lib" -name '*.jar' | sort | tr '\n' ':')
  classes=$(mktemp -d "${TMPDIR:-/tmp}/rocketwire-vectorgen-XXXXXX")
  javac -nowarn -Xlint:none -encoding UTF-8 -cp "$cp" -d "$classes" "$here/VectorGen.java" 2>&1 | grep -v '^Note:' || true
  [ -f "$classes/VectorGen.class" ] || { echo "javac failed for $v" >&2; exit 1; }
  java --add-opens java.base/java.util=ALL-UNNAMED -Drocketmq.client.logUseSlf4j=false -cp "$classes:$cp" VectorGen "$v" "$out/$v"
  rm -rf "$classes"
  echo "vectors for $v written in $(( $(date +%s) - start )) s"
done

[ -z "${ROCKETWIRE_VECTORS_OUT:-}" ] || exit 0

# The ACL signature is version-independent; keep one copy where the remoting tests read it, and
# fail loudly if the releases ever disagree.
acl_src="$repo/test/fixtures/vectors/5.3.3/acl-signatures.json"
[ -f "$acl_src" ] || acl_src="$repo/test/fixtures/vectors/${versions[0]}/acl-signatures.json"
for other in "$repo"/test/fixtures/vectors/*/acl-signatures.json; do
  cmp -s "$acl_src" "$other" || { echo "ACL signatures differ between $acl_src and $other" >&2; exit 1; }
done
mkdir -p "$repo/test/fixtures/acl"
cp "$acl_src" "$repo/test/fixtures/acl/signatures.json"
