#!/usr/bin/env python3
"""Writes a parameter archive for the tests, from the standard library only (the
format of include/HPVM/Transforms/ParameterArchive.h, written independently of the
Python package's writer):

    parameter-archive.py OUT key=HEX [key=HEX ...]      entries of the given bytes
    parameter-archive.py OUT --bad-magic | --truncated | --overlap | --twice

The malformed variants write an archive of one entry 'w' that breaks one rule."""
import struct
import sys


def archive(entries, magic=b"HPVMPRM1"):
    index = b""
    for key, data in entries:
        entry = struct.pack("<QQI", 0, 0, len(key)) + key
        index += entry + b"\0" * (-len(entry) % 8)
    start = 24 + len(index)
    offsets, at = [], start
    for _, data in entries:
        at += -at % 64
        offsets.append(at)
        at += len(data)
    index = bytearray(index)
    pos = 0
    for (key, data), offset in zip(entries, offsets):
        index[pos:pos + 16] = struct.pack("<QQ", offset, len(data))
        pos += 20 + len(key)
        pos += -pos % 8
    out = bytearray(magic + struct.pack("<QQ", len(entries), len(index)) + bytes(index))
    for (_, data), offset in zip(entries, offsets):
        out += b"\0" * (offset - len(out)) + data
    return bytes(out)


def main():
    out, args = sys.argv[1], sys.argv[2:]
    one = [(b"w", bytes(range(16)))]
    if args == ["--bad-magic"]:
        data = archive(one, magic=b"NOTHPVM!")
    elif args == ["--truncated"]:
        data = archive(one)[:-4]
    elif args == ["--overlap"]:  # the entry's offset points into the index
        data = bytearray(archive(one))
        data[24:32] = struct.pack("<Q", 8)
        data = bytes(data)
    elif args == ["--twice"]:
        data = archive(one + one)
    else:
        data = archive([(k.encode(), bytes.fromhex(v))
                        for k, v in (a.split("=", 1) for a in args)])
    with open(out, "wb") as stream:
        stream.write(data)


if __name__ == "__main__":
    main()
