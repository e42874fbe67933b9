"""Files the package reads and writes (models, weights, parameter archives, MLIR): every
failure an HPVMError naming the file, never a raw OSError.

A file is read only when it is a regular file once links are followed, and its size is
checked before anything is read: a link to /dev/zero or /dev/urandom would be read until
memory runs out, a named pipe would block forever. Output that must not go beside a
stream (a parameter archive beside /dev/stdout) is recognised by `is_stream`."""

from __future__ import annotations

import os
import stat
import tempfile
from typing import Optional

from .errors import HPVMError


def path_text(path, what: str) -> str:
    """`path` (str, bytes or os.PathLike) as a str; HPVMError for anything else and for
    a NUL byte, which the operating system would take as the end of the name."""
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        raise HPVMError(f"{what}: expected a path (str or os.PathLike), found "
                        f"{type(path).__name__}") from None
    if "\0" in text:
        raise HPVMError(f"{what}: the path {text!r} holds a NUL byte (at character "
                        f"{text.index(chr(0))}); expected a file name without NUL bytes")
    if not text:
        raise HPVMError(f"{what}: expected a path, found an empty string")
    return text


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _link_note(path: str) -> str:
    """' (a link to TARGET)' when `path` is a symbolic link, else ''."""
    try:
        if os.path.islink(path):
            return f" (a link to '{os.path.realpath(path)}')"
    except (OSError, ValueError):
        pass
    return ""


def regular_file(path, what: str, limit: Optional[int] = None,
                 limit_reason: str = "") -> os.stat_result:
    """The status of `path`, which must be a regular file (after links) of at most
    `limit` bytes; HPVMError naming `what` and the path otherwise."""
    text = path_text(path, what)
    try:
        info = os.stat(text)
    except FileNotFoundError:
        raise HPVMError(f"{what} '{text}' does not exist") from None
    except OSError as error:
        raise HPVMError(f"cannot read {what} '{text}': {error.strerror or error}") from None
    if not stat.S_ISREG(info.st_mode):
        raise HPVMError(f"{what} '{text}'{_link_note(text)} is {_kind(info.st_mode)}; "
                        "expected a regular file")
    if limit is not None and info.st_size > limit:
        raise HPVMError(f"{what} '{text}' holds {info.st_size} bytes; expected at most "
                        f"{limit}{limit_reason}")
    return info


def read_bytes(path, what: str, limit: Optional[int] = None, limit_reason: str = "") -> bytes:
    """The bytes of the regular file `path` (checked by `regular_file` first, and again
    once open, so that a file swapped for a pipe meanwhile is not read)."""
    text = path_text(path, what)
    regular_file(text, what, limit, limit_reason)
    try:
        descriptor = os.open(text, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise HPVMError(f"cannot read {what} '{text}': {error.strerror or error}") from None
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise HPVMError(f"{what} '{text}' is {_kind(info.st_mode)}; expected a regular "
                            "file")
        size = info.st_size
        if limit is not None and size > limit:
            raise HPVMError(f"{what} '{text}' holds {size} bytes; expected at most "
                            f"{limit}{limit_reason}")
        with os.fdopen(descriptor, "rb", closefd=True) as stream:
            descriptor = -1
            try:
                data = stream.read(size + 1)
            except MemoryError:
                raise HPVMError(f"cannot read {what} '{text}' ({size} bytes): out of "
                                "memory") from None
        if len(data) > size:
            raise HPVMError(f"{what} '{text}' grew while it was read; expected a file that "
                            "nothing writes meanwhile")
        return data
    except OSError as error:
        raise HPVMError(f"cannot read {what} '{text}': {error.strerror or error}") from None
    finally:
        if descriptor >= 0:
            os.close(descriptor)


def is_stream(path) -> bool:
    """Whether `path` names a stream rather than a place for files: a character device,
    a pipe or a socket (after links), or one of the process's own descriptors
    (/dev/stdout, /dev/stderr, /dev/fd/N, anything under /proc), which may be a regular
    file but has no folder of its own to write beside it."""
    text = os.path.abspath(os.fspath(path))
    if text in ("/dev/stdin", "/dev/stdout", "/dev/stderr") or text.startswith(
            ("/dev/fd/", "/proc/")):
        return True
    try:
        mode = os.stat(text).st_mode
    except (OSError, ValueError):
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def same_file(a, b) -> bool:
    """Whether `a` and `b` name one existing file (links and hard links included)."""
    try:
        return os.path.samefile(os.fspath(a), os.fspath(b))
    except (OSError, ValueError):
        return False


def check_output(path, what: str) -> str:
    """`path` as a str when a file can be written there: not a folder, in a folder that
    exists; HPVMError saying what was found otherwise."""
    text = path_text(path, what)
    if os.path.isdir(text):
        raise HPVMError(f"{what} '{text}' is a folder; expected the path of a file to write")
    folder = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(folder):
        raise HPVMError(f"{what} '{text}': the folder '{folder}' does not exist; expected "
                        "an existing folder")
    return text


def write_text(path, text: str, what: str) -> None:
    """Writes `text` to `path` (a regular file, or a stream such as /dev/stdout)."""
    target = check_output(path, what)
    try:
        with open(target, "w") as stream:
            stream.write(text)
    except OSError as error:
        raise HPVMError(f"cannot write {what} '{target}': {error.strerror or error}") from None


def write_atomically(path, write, what: str) -> None:
    """Calls `write(stream)` on a new file beside `path` and renames it to `path` once
    complete: a failure (a full disk, an error while writing) leaves the old file."""
    target = check_output(path, what)
    folder = os.path.dirname(os.path.abspath(target))
    partial = None
    try:
        descriptor, partial = tempfile.mkstemp(prefix=f".{os.path.basename(target)}.",
                                               suffix=".partial", dir=folder)
        with os.fdopen(descriptor, "wb") as stream:
            write(stream)
        os.chmod(partial, 0o666 & ~_umask())
        os.replace(partial, target)
        partial = None
    except OSError as error:
        raise HPVMError(f"cannot write {what} '{target}': {error.strerror or error}") from None
    finally:
        if partial is not None:
            try:
                os.unlink(partial)
            except OSError:
                pass


def _umask() -> int:
    """The process's umask, read without setting it (os.umask would change it for every
    thread meanwhile)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o022
