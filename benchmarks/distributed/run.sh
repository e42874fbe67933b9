#!/usr/bin/env bash
# Distributed streams (docs/Distributed.md), measured on this machine; not a test.
#   1. The MPI layer's cost with one rank: the stream of 10,000-item programs
#      (test/Integration/Distributed/Inputs/stream_items.c, no injected cost) built without
#      --distribute, with it and run alone, and with it under mpirun -np 1.
#   2. Items/s against ranks with an injected per-item cost (WORK iterations of arithmetic per
#      item): mpirun -np 2..4 (1..3 workers; rank 0 only deals).
#   3. The transport per item: the same stream with no cost over one worker, by the MPI layer
#      and by hand with MPI_Send / MPI_Recv (hand_mpi.c); µs per item and bytes per item.
# usage: benchmarks/distributed/run.sh [BUILD_DIR] (ITEMS, WORK, REPEAT from the environment)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$HERE/../.."
BUILD="${1:-$ROOT/build}"
ITEMS="${ITEMS:-200000}"
WORK="${WORK:-20000}"
REPEAT="${REPEAT:-3}"
OUT="${HPVM_BENCH_OUT:-$BUILD/bench-distributed}"
SRC="$ROOT/test/Integration/Distributed/Inputs/stream_items.c"
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Ranks run threads of their own: no binding to one core each (Open MPI binds with -np 1, 2).
MPIRUN=(mpirun --oversubscribe --bind-to none)

"$BUILD/bin/hpvm-cc" -O2 "$SRC" -o "$OUT/items"
"$BUILD/bin/hpvm-cc" -O2 --distribute=mpi "$SRC" -o "$OUT/items-mpi"
mpicc -O2 -march=native "$HERE/hand_mpi.c" -o "$OUT/hand-mpi"

# The best of REPEAT runs' stream time (the program prints "stream: S s" on stderr).
best() {
  local best=""
  for _ in $(seq "$REPEAT"); do
    local t
    t=$("$@" 2>&1 >/dev/null | sed -n 's/^stream: \([0-9.]*\) s$/\1/p')
    best=$(python3 -c "print(min(float('$t'), float('${best:-inf}')))")
  done
  echo "$best"
}
rate() { python3 -c "print(f'{$1 / $2:,.0f}')"; }
micro() { python3 -c "print(f'{$2 / $1 * 1e6:.2f}')"; }

echo "== 1. one rank, $ITEMS items, no cost (items/s, best of $REPEAT)"
one=$(best "$OUT/items" "$ITEMS" 0 quiet)
alone=$(best "$OUT/items-mpi" "$ITEMS" 0 quiet)
np1=$(best "${MPIRUN[@]}" -np 1 "$OUT/items-mpi" "$ITEMS" 0 quiet)
echo "one process               $(rate "$ITEMS" "$one")"
echo "--distribute=mpi, alone   $(rate "$ITEMS" "$alone")"
echo "--distribute=mpi, -np 1   $(rate "$ITEMS" "$np1")"
python3 -c "print(f'overhead with 1 rank: {($np1 / $one - 1) * 100:+.1f}%'
              f' (alone {($alone / $one - 1) * 100:+.1f}%)')"

# The same as CPU time per item (perf stat's task-clock, which the machine's other load does
# move as much as it moves wall time): one thread, 1 item and 10 x ITEMS items (the least of
# REPEAT runs each), the difference per item; under mpirun the CPU time includes mpirun's.
if command -v perf >/dev/null; then
  cpu_ms() {  # the least of REPEAT runs
    local least="" t
    for _ in $(seq "$REPEAT"); do
      t=$(HPVM_NUM_THREADS=1 perf stat -x, -e task-clock "$@" 2>&1 >/dev/null |
            sed -n 's/^\([0-9.]*\),msec,task-clock.*/\1/p')
      least=$(python3 -c "print(min(float('$t'), float('${least:-inf}')))")
    done
    echo "$least"
  }
  per_item() {
    local small large
    small=$(cpu_ms "$@" 1 0 quiet)
    large=$(cpu_ms "$@" $((ITEMS * 10)) 0 quiet)
    python3 -c "print(f'{($large - $small) * 1e3 / ($ITEMS * 10):.4f}')"
  }
  c_one=$(per_item "$OUT/items")
  c_alone=$(per_item "$OUT/items-mpi")
  c_np1=$(per_item "${MPIRUN[@]}" -np 1 "$OUT/items-mpi")
  echo "CPU us per item: one process $c_one, alone $c_alone, -np 1 $c_np1"
  python3 -c "print(f'overhead per item with 1 rank (CPU time): {($c_np1 / $c_one - 1) * 100:+.1f}%'
              f' (alone {($c_alone / $c_one - 1) * 100:+.1f}%)')"
fi

N=$((ITEMS / 50))
echo "== 2. $N items with $WORK iterations each (items/s, best of $REPEAT)"
t=$(best env HPVM_NUM_THREADS=1 "$OUT/items" "$N" "$WORK" quiet)
echo "one process, 1 thread     $(rate "$N" "$t")"
echo "one process               $(rate "$N" "$(best "$OUT/items" "$N" "$WORK" quiet)")"
for np in 2 3 4; do
  t=$(best env HPVM_NUM_THREADS=1 "${MPIRUN[@]}" -np "$np" "$OUT/items-mpi" "$N" "$WORK" quiet)
  echo "-np $np ($((np - 1)) worker(s), 1 thread each)  $(rate "$N" "$t")"
done

echo "== 3. transport: $ITEMS items, no cost, one worker (µs per item, best of $REPEAT)"
layer=$(best "${MPIRUN[@]}" -np 2 "$OUT/items-mpi" "$ITEMS" 0 quiet)
hand=$(best "${MPIRUN[@]}" -np 2 "$OUT/hand-mpi" "$ITEMS" 0 quiet)
echo "MPI layer                 $(micro "$ITEMS" "$layer")"
echo "MPI_Send/Recv by hand     $(micro "$ITEMS" "$hand")"
# Bytes per item on the wire: the layer's ITEM (16-byte header + the 24-byte item) and
# RESULT (16-byte header + the 16-byte output); by hand the item and the result alone.
echo "bytes per item: MPI layer 40 + 32 = 72, by hand 24 + 16 = 40"
