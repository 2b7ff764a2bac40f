#!/usr/bin/env bash
# Fetches the Apache RocketMQ jars (name server, broker, tools, client) for the interop suite from
# Maven Central into ${ROCKETWIRE_CACHE:-$HOME/.cache/rocketwire}/rmq-<version>/lib, outside the repo.
# Usage: fetch-jars.sh [version...]   (default: 5.3.3 4.9.7 5.5.0)
# A version whose lib folder is complete is skipped without starting Maven, so a second run is a
# fast no-op. 4.9.8 cannot be used: its rocketmq-broker and rocketmq-namesrv jars were never
# published to Central (only client/tools/common/...), so 4.9.7 is the newest runnable 4.x; 5.5.1's
# rocketmq-client is not served, so 5.5.0 is the newest runnable 5.x.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${ROCKETWIRE_CACHE:-$HOME/.cache/rocketwire}"
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(5.3.3 4.9.7 5.5.0)
# 5.x also gets its proxy (rocketmq-proxy) in $dest/proxy: the jars of proxy-pom.xml that lib/ lacks,
# so that the proxy runs with the class path lib/*:proxy/*.
fetch_proxy() {
  local v=$1 dest=$2 tmp start
  [ -f "$dest/proxy/.complete" ] && return 0
  [ -d "$dest/proxy" ] && rm -rf "$dest/proxy"
  tmp="$(mktemp -d "$dest/proxy.tmp.XXXXXX")"
  start=$(date +%s)
  if ! mvn -B -q -f "$here/proxy-pom.xml" -Drmq.version="$v" \
      org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$tmp" >"$tmp.log" 2>&1; then
    echo "fetch-jars: Maven could not fetch rocketmq-proxy $v (log: $tmp.log)" >&2
    rm -rf "$tmp"
    exit 1
  fi
  rm -f "$tmp.log"
  for j in "$tmp"/*.jar; do [ -f "$dest/lib/$(basename "$j")" ] && rm -f "$j"; done
  touch "$tmp/.complete"
  if ! mv -T "$tmp" "$dest/proxy" 2>/dev/null; then rm -rf "$tmp"; fi
  echo "fetch-jars: rocketmq-proxy $v jars in $dest/proxy ($(( $(date +%s) - start )) s)" >&2
}

for v in "${versions[@]}"; do
  dest="$cache/rmq-$v"
  if [ -f "$dest/lib/.complete" ]; then
    case "$v" in 5.*) fetch_proxy "$v" "$dest" ;; esac
    continue
  fi
  command -v mvn >/dev/null 2>&1 || { echo "fetch-jars: mvn not found, cannot fetch RocketMQ $v" >&2; exit 2; }
  mkdir -p "$dest"
  [ -d "$dest/lib" ] && rm -rf "$dest/lib"   # left over from an interrupted or older fetch
  tmp="$(mktemp -d "$dest/lib.tmp.XXXXXX")"
  start=$(date +%s)
  if ! mvn -B -q -f "$here/pom.xml" -Drmq.version="$v" \
      org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$tmp" >"$tmp.log" 2>&1; then
    echo "fetch-jars: Maven could not fetch RocketMQ $v (log: $tmp.log)" >&2
    rm -rf "$tmp"
    exit 1
  fi
  rm -f "$tmp.log"
  touch "$tmp/.complete"
  # Another process may have finished first; either copy is complete, keep the one in place.
  if ! mv -T "$tmp" "$dest/lib" 2>/dev/null; then rm -rf "$tmp"; fi
  echo "fetch-jars: RocketMQ $v jars in $dest/lib ($(( $(date +%s) - start )) s)" >&2
  case "$v" in 5.*) fetch_proxy "$v" "$dest" ;; esac
done
