#!/usr/bin/env python3
"""Fails when two paths of the source tree differ only by case.

On a case-insensitive file system (the default on macOS and Windows) such paths are one
file or folder, and a clone of the repository loses one of them. Reads the paths git
tracks (or, outside a git checkout, every path under the root but build folders), prints
each collision and exits 1; prints "check-path-case: N paths, no case collisions" and
exits 0 otherwise.

usage: check-path-case.py [SOURCE_ROOT]
"""
import os
import subprocess
import sys


def tracked_paths(root):
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, check=True).stdout
        files = [p for p in out.decode("utf-8", "replace").split("\0") if p]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = [d for d in subdirectories
                             if d != ".git" and not d.startswith("build")]
        for name in names:
            files.append(os.path.relpath(os.path.join(directory, name), root))
    return files


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = tracked_paths(root)
    # Every file and every folder on the way to it.
    paths = set()
    for path in files:
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            paths.add("/".join(parts[:i]))
    seen = {}
    collisions = 0
    for path in sorted(paths):
        key = path.lower()
        if key in seen and seen[key] != path:
            print("case collision: %s and %s" % (seen[key], path))
            collisions += 1
        seen.setdefault(key, path)
    if collisions:
        return 1
    print("check-path-case: %d paths, no case collisions" % len(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
