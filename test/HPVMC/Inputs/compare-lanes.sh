#!/bin/bash
# Compiles each HPVM-C program of $1 twice, with its leaves' instances run as
# vector lanes (hpvm-cc's default) and one by one (-fno-hpvm-lanes), runs both
# and fails on any difference in their output or exit status. $2: a scratch
# directory; further arguments are passed to both compiles (-ffp-contract=fast,
# say). Prints one line per program.
set -u
dir=$1
out=$2
shift 2
flags=("$@")
mkdir -p "$out"
status=0
for source in "$dir"/*.c "$dir"/*.cpp; do
  name=$(basename "$source")
  if ! hpvm-cc -O2 "${flags[@]}" "$source" -o "$out/$name.lanes" 2>"$out/$name.lanes.err" ||
     ! hpvm-cc -O2 -fno-hpvm-lanes "${flags[@]}" "$source" -o "$out/$name.scalar" \
       2>"$out/$name.scalar.err"; then
    echo "$name: does not compile"; cat "$out/$name".*.err; status=1; continue
  fi
  "$out/$name.lanes" >"$out/$name.lanes.out" 2>&1; lanes_rc=$?
  "$out/$name.scalar" >"$out/$name.scalar.out" 2>&1; scalar_rc=$?
  if [ $lanes_rc -ne $scalar_rc ] || ! cmp -s "$out/$name.lanes.out" "$out/$name.scalar.out"; then
    echo "$name: lanes and scalar differ (exit $lanes_rc vs $scalar_rc)"
    diff "$out/$name.lanes.out" "$out/$name.scalar.out" | head -20
    status=1
  else
    echo "$name: same"
  fi
done
exit $status
