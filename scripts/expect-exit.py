#!/usr/bin/env python3
"""Runs a command and succeeds only when it exits with the given status.

Tests use it instead of `not`, which accepts any nonzero status: an error test must see
the user-error status (1), not a crash (a signal, or hpvm-cc's internal-error status 70)
that happened after the expected message was printed.

usage: expect-exit.py STATUS COMMAND [ARGS...]
"""
import signal
import subprocess
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: expect-exit.py STATUS COMMAND [ARGS...]")
    expected = int(sys.argv[1])
    status = subprocess.call(sys.argv[2:])
    if status == expected:
        return 0
    if status < 0:
        found = "killed by signal %d (%s)" % (-status, signal.Signals(-status).name)
    else:
        found = "exit status %d" % status
    sys.stderr.write("expect-exit: '%s' ended with %s, expected exit status %d\n"
                     % (sys.argv[2], found, expected))
    return 1


if __name__ == "__main__":
    sys.exit(main())
