#!/bin/bash
# SPDX-License-Identifier: GPL-3.0-or-later
# Before/after check of a refactoring: runs the same exposure-cli commands (stats as text, JSON, CSV and for all
# ranks; info as text and JSON; three what-ifs; render as SVG and PNG; compare) with two builds on the demo trace
# and the traces in ../shared/traces, and compares stdout, stderr, exit status and the figures byte for byte.
#
#   tests/tools/same_outputs.sh OLD_BIN_DIR NEW_BIN_DIR [DEMO_TRACE]
#
# OLD_BIN_DIR / NEW_BIN_DIR hold exposure-cli and exposure-cli-render (e.g. a build of the last landed main copied
# aside, and build/app). Prints each difference and a count; exits 1 when anything differs. Never run by CI (it
# needs two builds); docs/architecture.md says when to run it.
set -u
old=$(cd "$1" && pwd) new=$(cd "$2" && pwd)
here=$(cd "$(dirname "$0")/../.." && pwd)
demo=${3:-$here/build/demo-trace}
shared=$(cd "$here/../shared/traces" 2>/dev/null && pwd) || shared=
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old" "$work/new" "$work/ws1" "$work/ws2"
traces=("$demo")
if [ -n "$shared" ]; then
    ln -s "$shared/kineto-ddp-bert/ddp_bert_ws1_rank0.json.gz" "$work/ws1/"
    ln -s "$shared"/kineto-ddp-bert/ddp_bert_ws2_rank*.json.gz "$work/ws2/"
    traces+=("$shared/scorep-h200-ddp-1gpu" "$shared/scorep-mi300-simple" "$work/ws1" "$work/ws2"
        "$shared/megatron-timeline-st")
fi
compared=0 differ=0
check() { # FILE: compares work/old/FILE with work/new/FILE
    compared=$((compared + 1))
    cmp -s "$work/old/$1" "$work/new/$1" || { echo "differs: $1"; differ=$((differ + 1)); }
}
run() { # NAME ARGS...: one command with both builds
    local name=$1
    shift
    for side in old new; do
        local bin=$old
        [ $side = new ] && bin=$new
        (cd "$work/$side" && "$bin/exposure-cli" "$@" >"$name.out" 2>"$name.err"; echo $? >"$name.rc")
    done
    for x in out err rc; do check "$name.$x"; done
}
i=0
for t in "${traces[@]}"; do
    i=$((i + 1))
    echo "trace $i: $t"
    run "stats$i" stats "$t"
    run "stats-json$i" stats --json "$t"
    run "stats-csv$i" stats --csv "$t"
    run "stats-all$i" stats --all-ranks "$t"
    run "info$i" info "$t"
    run "info-json$i" info --json "$t"
    run "whatif$i" whatif --comm hidden "$t"
    run "whatif-json$i" whatif --json --comm x2 --no-sync "$t"
    run "whatif-even$i" whatif --json --even "$t"
    run "render-svg$i" render --output "figure$i.svg" "$t"
    run "render-png$i" render --output "figure$i.png" "$t"
    for f in "figure$i.svg" "figure$i.png"; do
        [ -f "$work/old/$f" ] || [ -f "$work/new/$f" ] && check "$f"
    done
done
[ -n "$shared" ] && run compare compare "$demo" "$work/ws2" && run compare-json compare --json "$demo" "$work/ws2"
echo "$compared outputs compared, $differ differ"
[ "$differ" -eq 0 ]
