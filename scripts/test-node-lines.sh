#!/usr/bin/env bash
# Runs part of the test suite under other Node.js release lines than the machine's own `node`
# (default: 22 and 24, the LTS lines the README recommends), without installing them system-wide.
#
#   scripts/test-node-lines.sh                   # lines 22 and 24, the default smoke tests
#   scripts/test-node-lines.sh 24                # one line
#   scripts/test-node-lines.sh 22 -- packages/zns-sim   # other test files (vitest filters)
#
# For each line (22 or later) it:
# 1. takes the newest version of the line from the npm registry's `node-<os>-<cpu>` package, the
#    official Node.js binary, into the cache;
# 2. copies the repository's sources into a scratch directory in the cache, whose node_modules links
#    to this checkout's, except the embedded store's drivers (packages/gateway/src/store/
#    sqlite-driver.ts): better-sqlite3 13 (`better-sqlite3-v13`), the driver for Node.js 22 and
#    later, ships prebuilt Node-API binaries that fit every such line, so nothing is compiled; it is
#    this checkout's copy or, as an install on Node.js 20 leaves it out, the lockfile's version from
#    the npm registry. better-sqlite3 12, built for this machine's Node.js 20, is left out, so
#    nothing under test can load it;
# 3. runs the tests with that node first on PATH, so every process they start (npm start, the
#    gateway, the simulator, tms-client) runs on it too.
#
# Every download is from the npm registry. Cache: $TMS_NODE_LINES_CACHE, default
# ~/.cache/tms-node-lines (about 180 MB per line). Run `npm install` in this checkout first.
# TMS_TEST_DATABASE_URL is passed on as it is.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cache="${TMS_NODE_LINES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tms-node-lines}"

# What a new user meets first, end to end: npm start (demo send delivered, restart, webhook
# walkthrough, no orphans), tms start/migrate/worker, an in-process send on the embedded store, the
# simulator, and the SDK and its CLI.
default_tests=(
  packages/gateway/test/operator/npm-start.test.ts
  packages/gateway/test/operator/quick-start.test.ts
  packages/gateway/test/smoke.test.ts
  packages/zns-sim/test
  packages/client/test/cli.test.ts
)

lines=()
tests=()
while (($#)); do
  if [[ $1 == -- ]]; then
    shift
    tests=("$@")
    break
  fi
  lines+=("$1")
  shift
done
((${#lines[@]})) || lines=(22 24)
((${#tests[@]})) || tests=("${default_tests[@]}")

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x64 ;;
  Linux-aarch64) platform=linux-arm64 ;;
  *) echo "test-node-lines: only Linux x64 and arm64 are supported (the tests read /proc)" >&2; exit 2 ;;
esac

for line in "${lines[@]}"; do
  [[ $line =~ ^[0-9]+$ ]] && ((line >= 22)) ||
    { echo "test-node-lines: $line: only lines from 22 on (they share one prebuilt better-sqlite3 13; Node.js 20 runs 12, built by npm install: run npm test on it)" >&2; exit 2; }
done
command -v rsync >/dev/null || { echo "test-node-lines: rsync is needed (Debian: apt-get install rsync)" >&2; exit 2; }
[[ -d $root/node_modules/vitest ]] || { echo "test-node-lines: run npm install first" >&2; exit 2; }

mkdir -p "$cache/downloads"
package="node-$platform"

# The newest published version of a line (e.g. 22 → 22.23.3); offline, the newest one in the cache.
newest_version() {
  local line=$1 listed
  if listed="$(npm view "$package@$line" version --json 2>/dev/null)" && [[ -n $listed ]]; then
    node -e '
      const listed = JSON.parse(process.argv[1]);
      const versions = (Array.isArray(listed) ? listed : [listed]).filter((v) => /^\d+\.\d+\.\d+$/.test(v));
      const key = (v) => v.split(".").map(Number);
      versions.sort((a, b) => { const [x, y] = [key(a), key(b)]; return x[0] - y[0] || x[1] - y[1] || x[2] - y[2]; });
      console.log(versions.at(-1) ?? "");' "$listed"
  else
    find "$cache" -maxdepth 1 -name "node-$line.*" -printf '%f\n' | sed 's/^node-//' | sort -V | tail -n 1
  fi
}

# Unpacks node-<platform>@<version> into $cache/node-<version>; prints that directory.
install_node() {
  local version=$1 dir="$cache/node-$1" tarball="$cache/downloads/$package-$1.tgz"
  if [[ ! -x $dir/bin/node ]]; then
    [[ -f $tarball ]] || npm pack "$package@$version" --pack-destination "$cache/downloads" --silent >/dev/null
    rm -rf "$dir.partial"
    mkdir -p "$dir.partial"
    tar -xzf "$tarball" -C "$dir.partial" --strip-components=1 package/bin package/package.json
    mv "$dir.partial" "$dir"
  fi
  echo "$dir"
}

# better-sqlite3 13 at the version and integrity the lockfile names, unpacked once into the cache
# (its prebuilt binaries do not depend on the Node.js version); prints that directory.
driver_for_node_22_and_later() {
  local locked version integrity
  locked="$(node -e '
    const entry = require(process.argv[1]).packages["node_modules/better-sqlite3-v13"];
    if (!entry) process.exit(1);
    console.log(entry.version, entry.integrity);' "$root/package-lock.json")" ||
    { echo "test-node-lines: package-lock.json has no better-sqlite3-v13" >&2; exit 1; }
  read -r version integrity <<<"$locked"
  local installed="$root/node_modules/better-sqlite3-v13"
  if [[ -f $installed/package.json && $(node -p "require('$installed/package.json').version") == "$version" ]]; then
    echo "$installed"
    return
  fi
  local dir="$cache/better-sqlite3-$version" tarball="$cache/downloads/better-sqlite3-$version.tgz"
  if [[ ! -f $dir/package.json ]]; then
    [[ -f $tarball ]] || npm pack "better-sqlite3@$version" --pack-destination "$cache/downloads" --silent >/dev/null
    node -e '
      const [file, expected] = process.argv.slice(1);
      const [algorithm] = expected.split("-");
      const actual = `${algorithm}-${require("node:crypto").createHash(algorithm).update(require("node:fs").readFileSync(file)).digest("base64")}`;
      if (actual !== expected) { console.error(`test-node-lines: ${file} is ${actual}, the lockfile says ${expected}`); process.exit(1); }' \
      "$tarball" "$integrity" || { rm -f "$tarball"; exit 1; }
    rm -rf "$dir.partial"
    mkdir -p "$dir.partial"
    tar -xzf "$tarball" -C "$dir.partial" --strip-components=1
    mv "$dir.partial" "$dir"
  fi
  echo "$dir"
}

# The scratch copy: this checkout's sources, node_modules linked to this checkout's except the
# SQLite drivers (13 from the cache, 12 left out) and the workspace packages (the scratch copy's own).
prepare_scratch() {
  local version=$1 driver=$2 scratch="$cache/work/node-$1"
  local modules="$scratch/node_modules"
  mkdir -p "$modules/@tms"
  rsync -a --delete \
    --exclude=/node_modules --exclude=node_modules --exclude=.git --exclude=/.tms --exclude=/data \
    --exclude=/coverage --exclude=/bench-results --exclude=dist \
    "$root/" "$scratch/"
  find "$modules" -maxdepth 1 -type l -delete
  # A scratch copy made by an earlier version of this script holds a compiled better-sqlite3 12.
  rm -rf "$modules/better-sqlite3"
  for entry in "$root"/node_modules/*; do
    local name
    name="$(basename "$entry")"
    [[ $name == better-sqlite3 || $name == better-sqlite3-v13 || $name == @tms || -e $modules/$name ]] && continue
    ln -s "$entry" "$modules/$name"
  done
  ln -s "$driver" "$modules/better-sqlite3-v13"
  for workspace in "$root"/node_modules/@tms/*; do
    ln -sfn "$(readlink "$workspace")" "$modules/@tms/$(basename "$workspace")"
  done
  rm -rf "$modules/.bin"
  cp -a "$root/node_modules/.bin" "$modules/.bin"
  echo "$scratch"
}

driver="$(driver_for_node_22_and_later)"
status=0
summary=()
for line in "${lines[@]}"; do
  started=$SECONDS
  version="$(newest_version "$line")"
  [[ -n $version ]] || { echo "test-node-lines: no $package version for line $line" >&2; exit 1; }
  echo "== Node.js $version (line $line)"
  node_dir="$(install_node "$version")"
  scratch="$(prepare_scratch "$version" "$driver")"
  ready=$((SECONDS - started))
  (
    cd "$scratch"
    export PATH="$node_dir/bin:$PATH"
    [[ $(node -v) == "v$version" ]] || { echo "test-node-lines: node on PATH is $(node -v), not v$version" >&2; exit 1; }
    # The store's own driver choice, before any test: it must pick 13 and open a database.
    node --import tsx --input-type=module -e "
      import { openSqliteDatabase, sqliteDriver } from './packages/gateway/src/store/sqlite-driver.ts';
      const { version } = openSqliteDatabase(':memory:').prepare('select sqlite_version() as version').get();
      console.log('embedded store: ' + sqliteDriver.packageName + ' (better-sqlite3 ' + sqliteDriver.majorVersion + '), SQLite ' + version);
      if (sqliteDriver.majorVersion !== 13) process.exit(1);" || exit 1
    node node_modules/vitest/vitest.mjs run "${tests[@]}"
  ) && result=passed || { result=FAILED; status=1; }
  summary+=("Node.js $version: $result (ready in ${ready}s, total $((SECONDS - started))s)")
done
printf '%s\n' "== summary" "${summary[@]}"
exit "$status"
