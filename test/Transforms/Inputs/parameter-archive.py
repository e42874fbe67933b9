#!/usr/bin/env python3
"""Writes a parameter archive for the tests, from the standard library only (the
format of include/HPVM/Transforms/ParameterArchive.h, written independently of the
Python package's writer):

    parameter-archive.py OUT key=HEX [key=HEX ...]      entries of the given bytes
    parameter-archive.py OUT --bad-magic | --truncated | --overlap | --twice | --first
                         | --index-changed | --reserved | --data-changed | --shifted | --share

The malformed variants write an archive of one entry 'w' (two for --share) that breaks one
rule: --first is the first format (HPVMPRM1, no checksums); --index-changed alters an
entry's offset without the header's checksum; --reserved sets a reserved header byte;
--data-changed flips a byte of the data; --shifted writes the data one byte after the
offset the index names (as a writer off by one would); --share gives two entries
overlapping bytes, with checksums that match."""
import struct
import sys
import zlib


def archive(entries, magic=b"HPVMPRM2", first=False, placed=None):
    """The archive's bytes. `placed` (optional) gives each entry's (offset, size) instead
    of the writer's layout; the data is then written at those offsets."""
    fixed = "<QQI" if first else "<QQII"
    header = 24 if first else 32
    index = b""
    for key, data in entries:
        entry = struct.pack(fixed, *([0] * (len(fixed) - 2)), len(key)) + key
        index += entry + b"\0" * (-len(entry) % 8)
    offsets, at = [], header + len(index)
    for _, data in entries:
        at += -at % 64
        offsets.append((at, len(data)))
        at += len(data)
    offsets = placed or offsets
    index = bytearray(index)
    pos = 0
    for (key, data), (offset, size) in zip(entries, offsets):
        if first:
            index[pos:pos + 16] = struct.pack("<QQ", offset, size)
        else:
            index[pos:pos + 20] = struct.pack("<QQI", offset, size, zlib.crc32(data))
        pos += struct.calcsize(fixed) + len(key)
        pos += -pos % 8
    head = magic + struct.pack("<QQ", len(entries), len(index))
    if not first:
        head += struct.pack("<II", zlib.crc32(bytes(index), zlib.crc32(head)), 0)
    out = bytearray(head + bytes(index))
    for (_, data), (offset, _) in zip(entries, offsets):
        if offset < len(head) + len(index):  # data placed into the index: not written
            continue
        out += b"\0" * (offset - len(out))
        out[offset:offset + len(data)] = data
    return bytes(out)


def main():
    out, args = sys.argv[1], sys.argv[2:]
    one = [(b"w", bytes(range(16)))]
    if args == ["--bad-magic"]:
        data = archive(one, magic=b"NOTHPVM!")
    elif args == ["--first"]:
        data = archive(one, magic=b"HPVMPRM1", first=True)
    elif args == ["--truncated"]:
        data = archive(one)[:-4]
    elif args == ["--overlap"]:  # the entry's offset points into the index
        data = archive(one, placed=[(8, 16)])
    elif args == ["--twice"]:
        data = archive(one + one)
    elif args == ["--index-changed"]:
        data = bytearray(archive(one))
        data[32:40] = struct.pack("<Q", 65)
        data = bytes(data)
    elif args == ["--reserved"]:
        data = bytearray(archive(one))
        data[28] = 1
        data = bytes(data)
    elif args == ["--data-changed"]:
        data = bytearray(archive(one))
        data[64 + 5] ^= 0x40
        data = bytes(data)
    elif args == ["--shifted"]:
        data = archive(one)
        data = data[:64] + b"\0" + data[64:]
    elif args == ["--share"]:
        two = [(b"a", bytes(range(16))), (b"w", bytes(range(8, 24)))]
        data = archive(two, placed=[(128, 16), (136, 16)])
    else:
        data = archive([(k.encode(), bytes.fromhex(v))
                        for k, v in (a.split("=", 1) for a in args)])
    with open(out, "wb") as stream:
        stream.write(data)


if __name__ == "__main__":
    main()
