"""Checks what a stream printed before a rank failed: complete lines of the one-process
output, in its order, none twice (a prefix of it, the items popped before the end), at least
`least` items, and not all of them (the failure came first).

usage: check_fault.py ONE_PROCESS_OUTPUT FAULT_OUTPUT LEAST"""
import sys


def main():
    one = open(sys.argv[1]).read().splitlines()
    seen = open(sys.argv[2]).read().splitlines()
    least = int(sys.argv[3])
    if seen != one[:len(seen)]:
        sys.exit("check_fault: the output is not a prefix of the one-process output")
    items = [line for line in seen if line.startswith("item ")]
    if len(items) != len(set(items)):
        sys.exit("check_fault: an item was printed twice")
    if not least <= len(items) < len([line for line in one if line.startswith("item ")]):
        sys.exit("check_fault: %d items printed, expected from %d to fewer than all"
                 % (len(items), least))
    print("check_fault: %d items in order, none twice" % len(items))


if __name__ == "__main__":
    main()
