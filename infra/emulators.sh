#!/usr/bin/env bash
# emulators.sh runs a command with Amazon DynamoDB Local, the fauxqs SQS emulator and the
# kinesalite Kinesis emulator started on free loopback ports, and stops them whatever happens to
# the command.
#
#   infra/emulators.sh go test ./...
#
# The command sees DYNAMODB_ENDPOINT, SQS_ENDPOINT and KINESIS_ENDPOINT. The emulators are the
# engine's pinned ones (pkg/testkit/emulator: its npm/ directory), installed into the user's
# cache on first use, as the engine's own tests install them; their logs go to .local/logs/
# (EMULATORS_LOGS=<dir>: there instead, for a run inside another).
#
# No process outlives the run: this script becomes infra/cmd/reap, which starts the emulators
# as its children (they die with it, even when it is killed with SIGKILL), runs the command
# marked with the run's id (ONCEFLOW_RUN, which every process it starts inherits) and, when
# the command ends, is interrupted or loses its parent (make killed), ends every process of the
# run, however deep.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
logs="${EMULATORS_LOGS:-$root/.local/logs}"
mkdir -p "$logs"

# The IAM simulator that infra/iam's conformance test checks the gatekeeper against
# (infra/iamsim.mjs) is the local cloud's own npm package, pinned in infra/package-lock.json.
if [ ! -d "$here/node_modules/@cloud-copilot/iam-simulate" ]; then
  command -v npm >/dev/null 2>&1 || { echo "emulators: npm is required (it installs the pinned IAM simulator)" >&2; exit 1; }
  echo "emulators: installing the pinned IAM simulator (npm ci in infra/)" >&2
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >"$logs/npm-ci.log" 2>&1) || {
    echo "emulators: npm ci failed, see $logs/npm-ci.log" >&2; exit 1; }
fi

# reap, built from this checkout (go build reuses its cache).
reap="$root/.local/bin/reap"
(cd "$root" && "${GO:-go}" build -o "$reap" ./infra/cmd/reap) || { echo "emulators: could not build infra/cmd/reap" >&2; exit 1; }
exec "$reap" -run "emulators-$$-$RANDOM$RANDOM" -emulators "$logs" -- "$@"
