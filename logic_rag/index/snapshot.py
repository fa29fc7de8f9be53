"""One consistent version of an index folder, read through file descriptors opened together.

:func:`~logic_rag.index.store.write_folder` never changes a published folder: a save
builds a new one and swaps it in with two renames, then deletes the old one. A reader that
checks the checksums by path and later reopens the files by path can therefore read the
FAISS file of one version and the documents of the next (a mixed index, no error), or hash
one version and compare against the other's manifest (an intact index called corrupt).

A snapshot opens the folder once (a directory descriptor), reads the manifest through it
and opens every listed file relative to that descriptor, all before anything else happens.
Open descriptors keep their files readable after a writer renames or deletes the folder,
so the checksums are computed over, and the loaders parse, exactly the files of the
version whose manifest was read. Files are only opened relative to the directory
descriptor, one component at a time with ``O_NOFOLLOW``, so a name can neither follow a
symbolic link nor leave the folder. When the folder is caught in the middle of a swap (the
path is briefly missing, or the version was deleted before all its files were opened) the
open is retried; such a moment is never reported as corruption.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import stat
import time
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import Any, BinaryIO

from logic_rag.errors import IndexCorruptError
from logic_rag.json_limits import loads_bounded

__all__ = [
    "IndexSnapshot",
    "SnapshotView",
    "FolderFiles",
    "as_files",
    "open_snapshot",
    "read_manifest",
    "IndexBusyError",
]

MANIFEST_NAME = "manifest.json"
#: A manifest larger than this is not one of ours (it lists a handful of files).
MAX_MANIFEST_BYTES = 16 * 2**20
#: Attempts (with short sleeps) to catch a folder between two swaps before giving up.
OPEN_ATTEMPTS = 200
_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class IndexBusyError(IndexCorruptError):
    """The folder was replaced again and again while it was being opened (it is not corrupt)."""


class _Moved(Exception):
    """The version being opened was swapped out; open the folder again."""


class _FdReader(io.RawIOBase):
    """A seekable reader over a shared descriptor with its own position (``os.pread``)."""

    def __init__(self, fd: int, size: int) -> None:
        super().__init__()
        self._fd = fd
        self._size = size
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        want = min(len(view), max(self._size - self._pos, 0))
        if want <= 0:
            return 0
        data = os.pread(self._fd, want, self._pos)
        view[: len(data)] = data
        self._pos += len(data)
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: self._size}[whence]
        if base + offset < 0:
            raise OSError("negative seek position")
        self._pos = base + offset
        return self._pos

    def tell(self) -> int:
        return self._pos


class IndexSnapshot:
    """An opened index folder: ``manifest`` and a descriptor for every file it lists.

    ``folder`` is the path the user gave (used in messages only); :meth:`open` returns a
    fresh reader over one listed file of this very version. Close it (or use ``with``)
    to release the descriptors.
    """

    def __init__(
        self,
        folder: Path,
        manifest: dict[str, Any],
        fds: Mapping[str, int],
        verified: bool = True,
    ) -> None:
        self.folder = folder
        self.manifest = manifest
        self._fds = dict(fds)
        #: Whether every file was hashed at open; loaders scan the contents of mapped
        #: files (finite vectors) only then: ``verify=False`` is for trusted, huge
        #: folders whose files should not be read whole at load.
        self.verified = verified

    def size(self, name: str) -> int:
        """Length in bytes of the listed file ``name``."""
        return os.fstat(self._fd(name)).st_size

    def open(self, name: str) -> BinaryIO:
        """A buffered, seekable binary reader at offset 0 over the listed file ``name``."""
        fd = self._fd(name)
        return io.BufferedReader(_FdReader(fd, os.fstat(fd).st_size), 1 << 20)  # type: ignore[return-value]

    def descriptor(self, name: str) -> int:
        """A new descriptor of the listed file ``name`` (the caller closes it), for
        memory-mapping: the mapped bytes are those of this version, hashed at open."""
        return os.dup(self._fd(name))

    def display(self, name: str) -> Path:
        """The path of ``name`` as the user knows it, for messages."""
        return self.folder / name

    def view(self, prefix: str) -> SnapshotView:
        """The files under the sub-folder ``prefix`` (for loaders of a part of the index)."""
        return SnapshotView(self, prefix)

    def check_listed(self, name: Any) -> str:
        """``name`` if it is a plain name listed in the checksum table, else the error a
        tampered manifest deserves (loaders call this for every file they will open)."""
        from logic_rag.index.store import check_name

        try:
            check_name(name)
        except ValueError:
            raise IndexCorruptError(
                f"{self.folder / MANIFEST_NAME} names the file {name!r}, which is not a plain "
                f"name inside the index folder; rebuild the index"
            ) from None
        self._fd(name)
        return str(name)

    def _fd(self, name: str) -> int:
        try:
            return self._fds[name]
        except (KeyError, TypeError):
            raise IndexCorruptError(
                f"{self.folder / str(name)} is not in the checksum table of "
                f"{self.folder / MANIFEST_NAME}; rebuild the index"
            ) from None

    def close(self) -> None:
        fds, self._fds = self._fds, {}
        for fd in fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> IndexSnapshot:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __del__(self) -> None:
        self.close()


class SnapshotView(os.PathLike[str]):
    """A sub-folder of an :class:`IndexSnapshot`; ``str()`` is the user's path (messages)."""

    def __init__(self, snapshot: IndexSnapshot, prefix: str) -> None:
        self.snapshot = snapshot
        self.prefix = prefix.strip("/")

    def _name(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    def open(self, name: str) -> BinaryIO:
        return self.snapshot.open(self._name(name))

    def size(self, name: str) -> int:
        return self.snapshot.size(self._name(name))

    def descriptor(self, name: str) -> int:
        return self.snapshot.descriptor(self._name(name))

    def display(self, name: str) -> Path:
        return self.snapshot.display(self._name(name))

    @property
    def verified(self) -> bool:
        return self.snapshot.verified

    def __truediv__(self, sub: str | os.PathLike[str]) -> SnapshotView:
        part = PurePosixPath(os.fspath(sub)).as_posix()
        return SnapshotView(self.snapshot, self._name(part) if part != "." else self.prefix)

    def __fspath__(self) -> str:
        return str(self.snapshot.folder / self.prefix) if self.prefix else str(self.snapshot.folder)

    def __str__(self) -> str:
        return self.__fspath__()


# ------------------------------------------------------------------------------ opening
def _open_at(dir_fd: int, name: str) -> int:
    """Open ``name`` (a checked plain relative name) below ``dir_fd``, no link followed."""
    parts = PurePosixPath(name).parts
    current = dir_fd
    opened: list[int] = []
    try:
        for part in parts[:-1]:
            current = os.open(part, _DIR_FLAGS | _NOFOLLOW | _CLOEXEC, dir_fd=current)
            opened.append(current)
        # Without blocking: opening a FIFO for reading would wait for a writer forever
        # (issue 51 item 7); the caller checks the type with fstat before reading.
        return os.open(parts[-1], os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK, dir_fd=current)
    finally:
        for fd in opened:
            os.close(fd)


def _same_version(folder: Path, dir_fd: int) -> bool:
    """Whether ``folder`` still names the directory ``dir_fd`` was opened on."""
    try:
        now = os.stat(folder)
    except OSError:
        return False
    mine = os.fstat(dir_fd)
    return (now.st_dev, now.st_ino) == (mine.st_dev, mine.st_ino) and mine.st_nlink > 0


def _swap_in_progress(folder: Path) -> bool:
    """A live writer's ``.NAME.tmp-PID-*`` or ``.NAME.old-PID`` sits next to ``folder``."""
    from logic_rag.index.store import pid_alive, swap_leftovers

    return any(pid_alive(pid) for pid in swap_leftovers(folder))


def _sha256_fd(fd: int, size: int) -> str:
    digest = hashlib.sha256()
    offset = 0
    while offset < size:
        block = os.pread(fd, min(1 << 20, size - offset), offset)
        if not block:
            break
        digest.update(block)
        offset += len(block)
    return digest.hexdigest()


def _open_once(folder: Path, verify: bool, check: Any) -> IndexSnapshot:
    try:
        dir_fd = os.open(folder, _DIR_FLAGS | _CLOEXEC)
    except FileNotFoundError:
        if _swap_in_progress(folder):
            raise _Moved from None
        raise FileNotFoundError(
            f"{folder}: no such index folder; build one with `logic-rag index`"
        ) from None
    except NotADirectoryError:
        raise FileNotFoundError(
            f"{folder}: not a folder; an index is a folder built with `logic-rag index`"
        ) from None
    fds: dict[str, int] = {}
    try:
        try:
            manifest_fd = _open_at(dir_fd, MANIFEST_NAME)
        except FileNotFoundError:
            if not _same_version(folder, dir_fd):
                raise _Moved from None
            raise IndexCorruptError(
                f"{folder} has no {MANIFEST_NAME}; it is not a logic-rag index"
            ) from None
        except OSError:  # ELOOP: a symbolic link
            raise IndexCorruptError(
                f"{folder / MANIFEST_NAME} is a symbolic link; an index folder holds plain files"
            ) from None
        fds[MANIFEST_NAME] = manifest_fd
        info = os.fstat(manifest_fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_MANIFEST_BYTES:
            raise IndexCorruptError(f"{folder / MANIFEST_NAME} is not a logic-rag index manifest")
        raw = os.pread(manifest_fd, info.st_size, 0)
        try:
            manifest = loads_bounded(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:  # JSON errors, nesting past 64
            raise IndexCorruptError(
                f"{folder / MANIFEST_NAME} is not valid JSON ({exc}); rebuild the index"
            ) from None
        files = check(folder, manifest)
        for name in files:
            try:
                fds[name] = _open_at(dir_fd, name)
            except FileNotFoundError:
                if not _same_version(folder, dir_fd):
                    raise _Moved from None
                raise IndexCorruptError(
                    f"{folder / name} is missing; the index is incomplete, rebuild it"
                ) from None
            except OSError:
                raise IndexCorruptError(
                    f"{folder / name} is a symbolic link or not a file; an index folder holds "
                    f"plain files only"
                ) from None
            if not stat.S_ISREG(os.fstat(fds[name]).st_mode):
                raise IndexCorruptError(f"{folder / name} is not a plain file; rebuild the index")
        if verify:
            for name, meta in files.items():
                fd = fds[name]
                size = os.fstat(fd).st_size
                if size != meta["bytes"] or _sha256_fd(fd, size) != meta["sha256"]:
                    raise IndexCorruptError(
                        f"{folder / name} does not match the checksum recorded in "
                        f"{MANIFEST_NAME} (the file is corrupt or was modified); rebuild the "
                        f"index with `logic-rag index`"
                    )
        return IndexSnapshot(folder, manifest, fds, verified=verify)
    except BaseException:
        for fd in fds.values():
            os.close(fd)
        raise
    finally:
        os.close(dir_fd)


def open_snapshot(folder: str | os.PathLike[str], *, verify: bool = True) -> IndexSnapshot:
    """Open one consistent version of an index folder (see the module docstring).

    ``verify`` hashes every listed file through its open descriptor; without it only the
    names, types and presence are checked. Raises ``FileNotFoundError`` for a missing
    folder, :class:`~logic_rag.errors.IndexCorruptError` for a damaged one, and
    :class:`IndexBusyError` if the folder was replaced on every one of many attempts.
    """
    from logic_rag.index.store import check_manifest_table, recover_leftovers

    path = Path(folder)
    if not path.exists():
        recover_leftovers(path)
    for attempt in range(OPEN_ATTEMPTS):
        try:
            return _open_once(path, verify, check_manifest_table)
        except _Moved:
            time.sleep(min(0.001 * (attempt + 1), 0.02))
        except IndexCorruptError:
            # A version deleted while it was hashed is a swap, not damage: look again.
            if path.exists() and _swap_in_progress(path):
                time.sleep(0.005)
                continue
            raise
    raise IndexBusyError(
        f"{path} was replaced {OPEN_ATTEMPTS} times while it was being opened; wait for the "
        f"writer to finish and try again"
    )


def read_manifest(folder: str | os.PathLike[str], *, verify: bool = True) -> dict[str, Any]:
    """Read and check an index folder's manifest; with ``verify`` also every checksum.

    The file table must be non-empty and name plain files inside ``folder``; with
    ``verify=False`` (trusted, huge folders) sizes and checksums are not compared, the
    names still are. Loaders that go on to read the files use :func:`open_snapshot`
    instead, so that what they parse is the version whose checksums were checked.
    (Here rather than in :mod:`logic_rag.index.store`, which writes folders: the reader
    builds on the writer's rules, not the other way round.)
    """
    with open_snapshot(folder, verify=verify) as snapshot:
        return snapshot.manifest


class FolderFiles:
    """The :class:`IndexSnapshot` reading interface over a plain folder (no consistency
    guarantee: for files a caller wrote itself, or tests)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def open(self, name: str) -> BinaryIO:
        return os.fdopen(self.descriptor(name), "rb")

    def size(self, name: str) -> int:
        return (self.folder / name).stat().st_size

    def descriptor(self, name: str) -> int:
        """An open descriptor of a regular file (a FIFO is refused, not waited on)."""
        fd = os.open(self.folder / name, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK)
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise IndexCorruptError(f"{self.folder / name} is not a plain file")
        return fd

    def display(self, name: str) -> Path:
        return self.folder / name


def as_files(source: Any) -> IndexSnapshot | SnapshotView | FolderFiles:
    """``source`` if it is a snapshot (or a view of one), else a plain folder reader."""
    if isinstance(source, IndexSnapshot | SnapshotView | FolderFiles):
        return source
    return FolderFiles(source)
