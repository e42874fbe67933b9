"""The command line the function-length checks share (check-function-length.py for C and C++,
check-python-function-length.py for Python): [SOURCE_ROOT] [--limit N]."""


def arguments(argv, limit):
    """(the source root, "." by default; the limit, `limit` unless --limit N) of `argv`
    (sys.argv: the script's name first)."""
    root = "."
    args = list(argv[1:])
    while args:
        a = args.pop(0)
        if a == "--limit":
            limit = int(args.pop(0))
        else:
            root = a
    return root, limit
