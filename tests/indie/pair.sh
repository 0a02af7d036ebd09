#!/bin/bash
# One match between tests/indie and the real program, then `verify` of the real side's record.
# usage: [PRESET=rulebook] [PY=python] tests/indie/pair.sh DIR joiner|host ROUNDS SEED
#   joiner: indie joins, ours hosts; host: ours joins, indie hosts.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=${PY:-python}; PRESET=${PRESET:-rulebook}
D=$1; mkdir -p "$D"; cd "$D" || exit 2; rm -rf ./*.out ./*.err ./rec*.json ./cfg
export PYTHONPATH=$ROOT/tests
if [ "$2" = joiner ]; then
  $PY -m p2pkoikoi host --headless --bot random --bot-seed "$4" --port 0 --bind 127.0.0.1 \
    --rules "$PRESET" --set deal=${DEAL:-hidden} --rounds "$3" --no-port-mapping --no-announce --no-dht --no-stun ${REF_ARGS:-} \
    --config-dir "$D/cfg" --record "$D/rec.json" > ref.out 2> ref.err &
  ref=$!
  for _ in $(seq 100); do grep -q invite ref.out 2>/dev/null && break; sleep 0.1; done
  INV=$(head -1 ref.out | $PY -c "import json,sys; print(json.load(sys.stdin)['invite'])")
  timeout 600 $PY -m indie join "$INV" --seed "$4" ${INDIE_ARGS:-} > me.out 2> me.err; echo "indie rc=$?"
  wait $ref; echo "ours rc=$?"
else
  timeout 600 $PY -m indie host --rules "$PRESET" --set deal=${DEAL:-hidden} --rounds "$3" --seed "$4" ${INDIE_ARGS:-} > me.out 2> me.err &
  me=$!
  for _ in $(seq 100); do grep -q invite me.out 2>/dev/null && break; sleep 0.1; done
  INV=$(head -1 me.out | $PY -c "import json,sys; print(json.load(sys.stdin)['invite'])")
  timeout 600 $PY -m p2pkoikoi join "$INV" --headless --bot random --bot-seed "$4" --expect-rules "$PRESET" \
    --set deal=${DEAL:-hidden} --set "rounds=$3" --no-dht --no-stun ${REF_ARGS:-} --config-dir "$D/cfg" --record "$D/rec.json" \
    > ref.out 2> ref.err; echo "ours rc=$?"
  wait $me; echo "indie rc=$?"
fi
$PY -m p2pkoikoi verify "$D/rec.json" > verify.out 2>&1; echo "verify rc=$?"
tail -1 me.out
