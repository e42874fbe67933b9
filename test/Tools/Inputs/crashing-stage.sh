#!/bin/sh
# Stands in for hpvm-opt in hpvm-cc-internal-error.test: prints a diagnostic as a stage
# would, then fails the way $CRASH_MODE says (a signal, or a status other than 0 and 1).
echo "prog.c:5:3: error: a diagnostic printed before the crash" >&2
if [ "$CRASH_MODE" = status ]; then
  exit 3
fi
kill -SEGV $$
