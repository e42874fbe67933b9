#!/bin/sh
# ccache-launcher.sh - the compiler launcher of every CMake build of the project (when ccache is
# installed): ccache with the repository as its base directory, so that the absolute paths of a
# checkout (-I/any/clone/include, the source file) are hashed relative to the build directory
# and a fresh clone anywhere on the machine (CI's, a second worktree) reuses the objects an
# earlier clone compiled. NOHASHDIR: debug builds (the sanitizer runtimes) are shared too.
# Usage (by CMake): ccache-launcher.sh COMPILER ARGS...
root=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
CCACHE_BASEDIR=$root CCACHE_NOHASHDIR=true exec ccache "$@"
