#!/usr/bin/env bash
# device-examples.sh - the .mlir examples of test/Integration/Devices/opencl-examples.test
# (the same hosts, C references and flags), built with hpvm-cc --target=gpu, and their checks
# on an NVIDIA GPU: each result line as the test expects it, the gpu-hinted nodes on cuda:0
# (HPVM_TRACE=1), the others on the CPU. Two steps, for a GPU machine lent for minutes:
#   bash scripts/device-examples.sh build DIR     here (hpvm-cc): DIR/<programs> and DIR/run.sh
#   bash DIR/run.sh run [--expect-cpu]            there: one line per run, exit 1 if any failed
# --expect-cpu expects the hinted nodes on the CPU (the fallback of a machine without a GPU).
# HPVM_BIN: the directory of hpvm-cc (build/bin); HPVM_BUNDLE_MARCH: the -march= of the CPU
# code (-march=x86-64-v3, as scripts/gpu-device-bundle.sh).
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

build() { # DIR
  local ROOT BIN MARCH DIR failed=0
  ROOT="$(cd "$HERE/.." && pwd)"
  BIN="${HPVM_BIN:-$ROOT/build/bin}"
  MARCH="${HPVM_BUNDLE_MARCH:--march=x86-64-v3}"
  DIR="$(mkdir -p "$1" && cd "$1" && pwd)" || exit 1
  local EX="$ROOT/examples" IN="$ROOT/test/Integration/CPU/Inputs" B="$ROOT/benchmarks"
  # The vector-add host has a fixed size: a copy of it that takes the size as argv[1].
  mkdir -p "$DIR/src"
  sed 's/^int main(void) {/int main(int argc, char **argv) {/;
       s/long n = 1000003;/long n = argc > 1 ? atol(argv[1]) : 1000003;/' \
    "$IN/vector_add_host.c" >"$DIR/src/vector_add_host.c"
  grep -q 'argv\[1\]' "$DIR/src/vector_add_host.c" ||
    { echo "vector_add_host.c changed: the size argument is ignored" >&2; failed=1; }
  hpvm() { # NAME ARGS...: one program into DIR/NAME, its messages into DIR/NAME.log
    local name="$1"
    shift
    rm -f "$DIR/$name"
    # shellcheck disable=SC2086 # MARCH: flags, maybe none
    if "$BIN/hpvm-cc" --target=gpu -O3 $MARCH "$@" -I "$EX" -o "$DIR/$name" >"$DIR/$name.log" 2>&1; then
      echo "built $name"
    else
      echo "FAILED to build $name:" >&2
      tail -20 "$DIR/$name.log" >&2
      failed=1
    fi
  }
  hpvm vadd "$EX/vector_add.mlir" "$DIR/src/vector_add_host.c" "$B/common/small_ref.c" -I "$B/common"
  hpvm sgemm "$EX/sgemm.mlir" "$IN/sgemm_host.c" "$B/sgemm/sgemm_ref.c" -I "$B/sgemm"
  hpvm sgemm_flat "$EX/sgemm_flat.mlir" "$IN/sgemm_host.c" "$B/sgemm/sgemm_ref.c" -I "$B/sgemm"
  hpvm stencil -ffp-contract=off "$EX/stencil.mlir" "$IN/stencil_host.c" \
    "$B/stencil/stencil_ref.c" -I "$B/stencil"
  hpvm tiles "$EX/tile_reduction.mlir" "$IN/tile_reduction_host.c" "$B/common/small_ref.c" -I "$B/common"
  hpvm histogram "$EX/histogram.mlir" "$IN/histogram_host.c" "$B/common/small_ref.c" -I "$B/common"
  hpvm edge -ffp-contract=off "$EX/edge_detection.mlir" "$IN/edge_detection_host.c" \
    "$B/edge/edge_ref.c" -I "$B/edge" -I "$B/common" -lm
  cp "${BASH_SOURCE[0]}" "$DIR/run.sh"
  echo "# in $DIR: then bash $DIR/run.sh run"
  exit "$failed"
}

# ENV | PROGRAM | ARGS | the result line (a grep -E pattern) | nodes hinted gpu | nodes on the CPU
# Nodes not in the gpu column must not run on cuda.
EDGE_GPU="gaussian gradient laplacian reject zero_crossings"
RUNS=(
  "|vadd||vector add n=1000003 mismatches: 0|vadd_leaf|"
  "|vadd|50000000|vector add n=50000000 mismatches: 0|vadd_leaf|"
  "|sgemm|100 70 33|sgemm 100x70x33 mismatches: 0|mm_tile|"
  "|sgemm|1 1 1|sgemm 1x1x1 mismatches: 0|mm_tile|"
  "|sgemm|1000 700 333|sgemm 1000x700x333 mismatches: 0|mm_tile|"
  "|sgemm_flat|64 128 16|sgemm 64x128x16 mismatches: 0|mm_element|"
  "|sgemm_flat|1000 700 333|sgemm 1000x700x333 mismatches: 0|mm_element|"
  "|stencil|19 13 7 5|stencil 19x13x7 x5 mismatches: 0|stencil_point|"
  "|stencil|130 130 34 5|stencil 130x130x34 x5 mismatches: 0|stencil_point|"
  "|tiles|100003|tile sums n=100003 tiles=1563 mismatches: 0|tile|"
  "|tiles|50000017|tile sums n=50000017 tiles=[0-9]+ mismatches: 0|tile|"
  "|histogram|100003|histogram n=100003 total=100003 mismatches: 0||"
  "|histogram|50000017|histogram n=50000017 total=50000017 mismatches: 0||"
  "|edge|33 17 2 5|edge detection 33x17 frames=2 slots=5 edge_pixels=some differing=0 wrong_maxima=0|$EDGE_GPU|max_gradient"
  "|edge|96 64 11 3|edge detection 96x64 frames=11 slots=3 edge_pixels=some differing=0 wrong_maxima=0|$EDGE_GPU|max_gradient"
  "|edge|640 480 8 3|edge detection 640x480 frames=8 slots=3 edge_pixels=some differing=0 wrong_maxima=0|$EDGE_GPU|max_gradient"
  "HPVM_DEVICE=cpu|edge|96 64 5 2|edge detection 96x64 frames=5 slots=2 edge_pixels=some differing=0 wrong_maxima=0||$EDGE_GPU max_gradient"
)

# check_nodes NODES WHERE: each of NODES ran on WHERE (cuda or cpu), only there; else a reason.
check_nodes() {
  local node mine good wrong=()
  [[ "$2" == cuda ]] && good='^on cuda:' || good='^(on cpu|falls back)$'
  for node in $1; do
    mine=$(grep "^$node " <<<"$trace" | sed "s/^$node //; s/^falls back to cpu:.*/falls back/")
    if ! grep -qE "$good" <<<"$mine" || grep -qvE "$good" <<<"$mine"; then
      mine=${mine:-no trace}
      wrong+=("$node (${mine//$'\n'/, })")
    fi
  done
  ((${#wrong[@]} == 0)) || why+=("not on $2: ${wrong[*]}")
}

run() { # [--expect-cpu]
  local dev=cuda ok=0 failed=0 line envs prog args result gpu cpu out rc why trace node
  local on_cuda reasons name
  [[ "${1:-}" == --expect-cpu ]] && dev=cpu
  for line in "${RUNS[@]}"; do
    IFS='|' read -r envs prog args result gpu cpu <<<"$line"
    # shellcheck disable=SC2086 # envs and args are word lists
    out=$(cd "$HERE" && env HPVM_TRACE=1 $envs timeout 60 "./$prog" $args 2>&1)
    rc=$?
    trace=$(grep '^hpvm-trace: ' <<<"$out" | sed 's/^hpvm-trace: //' | sort -u)
    why=()
    ((rc == 0)) || why+=("exit $rc$( ((rc == 124)) && echo ' (timed out after 60 s)')")
    grep -qE "^$result\$" <<<"$out" || why+=("no line '$result'")
    # A node's trace lines: "<node> on <device>" and "<node> falls back to cpu: <reasons>"
    # (a fallen-back node may run on the CPU as other nodes: a tile as its inner leaves).
    check_nodes "$gpu" "$dev"
    check_nodes "$cpu" cpu
    on_cuda=$(grep ' on cuda:' <<<"$trace" | sed 's/ on cuda:.*//' | xargs)
    for node in $on_cuda; do
      [[ "$dev" == cuda && " $gpu " == *" $node "* ]] || why+=("$node on cuda, unexpectedly")
    done
    # Why the nodes did not run on the GPU, once.
    reasons=$(grep -o ' falls back to cpu: .*' <<<"$trace" | sed 's/^ //' | sort -u)
    [[ "$dev" == cuda && ${#why[@]} -gt 0 && -n "$reasons" ]] && why+=("${reasons//$'\n'/; }")
    name="$prog${envs:+ ($envs)}${args:+ $args}"
    if ((${#why[@]} == 0)); then
      ok=$((ok + 1))
      if [[ "$dev" == cuda ]]; then
        echo "$name: ok (on cuda: ${on_cuda:-none})"
      else
        echo "$name: ok (on cpu: $(grep ' on cpu$' <<<"$trace" | sed 's/ on cpu$//' | xargs))"
      fi
    else
      failed=$((failed + 1))
      echo "$name: FAILED: $(printf '%s; ' "${why[@]}" | sed 's/; $//')"
      awk '!seen[$0]++' <<<"$out" | tail -4 | sed 's/^/    | /'
    fi
  done
  echo "examples: $ok ok, $failed failed"
  ((failed == 0))
}

case "${1:-}" in
  build) [[ $# -eq 2 ]] || { echo "usage: $0 build DIR" >&2; exit 2; }; build "$2" ;;
  run) [[ $# -eq 1 || "${2:-}" == --expect-cpu ]] || { echo "usage: $0 run [--expect-cpu]" >&2; exit 2; }
       run "${2:-}" ;;
  *) echo "usage: $0 build DIR | $0 run [--expect-cpu]" >&2; exit 2 ;;
esac
