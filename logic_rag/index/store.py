"""Index folders: a manifest, checksummed files, atomic replacement, no pickle.

An index folder holds the FAISS file, the documents as JSONL and ``manifest.json``
(format marker and version, model name and fingerprints, dimension, normalisation,
document count, SHA-256 of every file). The whole folder is built in a temporary sibling
``.OUT.tmp-PID-XXXX`` and swapped in with two renames (the old index goes to
``.OUT.old-PID`` for a moment), so an interrupted ``save`` leaves the previous index
intact; the leftovers of a killed run are cleaned, or the old index put back, by the next
run (:func:`recover_leftovers`).

Safety rules of the format (version 2):

- only this module's own folders are ever replaced: a folder is recognised as an index
  by its format marker and by holding nothing but the manifest and the files it lists;
- every name in the manifest is a plain relative name inside the folder (no absolute
  paths, no ``..``, no symbolic links), the checksum table is never empty, and every file
  a loader opens must be listed there (:func:`listed_file`);
- loading verifies every checksum before anything is parsed.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

from logic_rag.atomic import atomic_write_json, make_public_dir
from logic_rag.errors import IndexCorruptError
from logic_rag.json_limits import loads_bounded

__all__ = [
    "MANIFEST_NAME",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "file_sha256",
    "check_name",
    "is_index_folder",
    "has_index_manifest",
    "check_out_dir",
    "recover_leftovers",
    "write_folder",
    "check_manifest_table",
    "swap_leftovers",
    "listed_file",
]

log = logging.getLogger(__name__)

MANIFEST_NAME = "manifest.json"
#: The format marker: a manifest without it is not ours (browser extensions, npm, ...).
FORMAT_NAME = "logic-rag/index"
#: Version 2: format marker, plain names only, every file listed (1 left files unlisted).
FORMAT_VERSION = 2
_RESERVED = ("format", "format_version", "files")
# One path component of a listed file: letters, digits, '_', '-', '.', not starting with '.'.
_COMPONENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]{0,127}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
# Leftovers of write_folder next to OUT: ".OUT.tmp-PID-XXXX", ".OUT.old-PID", and the
# temporary folders of logic-rag < 0.2 (".OUT.XXXXXXXX.tmp", made by tempfile.mkdtemp).
_TMP = re.compile(r"tmp-(\d+)-[A-Za-z0-9_]+")
_LEGACY_TMP = re.compile(r"[a-z0-9_]{8}\.tmp")
_OLD = re.compile(r"old-(\d+)")
# Version-1 indexes wrote the SPLADE index's own manifest without listing it.
_LEGACY_UNLISTED = {"sparse/inverted.json"}


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def check_name(name: object) -> str:
    """``name`` if it is a plain relative file name inside a folder, else ``ValueError``.

    Plain: POSIX-style components of letters, digits, ``_``, ``-`` and ``.``, none
    starting with a dot, so no absolute path, no ``..``, no hidden file, no backslash.
    """
    if not isinstance(name, str) or not name or len(name) > 512:
        raise ValueError(f"{name!r} is not a plain file name")
    parts = name.split("/")
    if any(not _COMPONENT.fullmatch(part) for part in parts) or len(parts) > 4:
        raise ValueError(f"{name!r} is not a plain file name inside the index folder")
    return name


# ----------------------------------------------------------------------------- recognition
def _load_manifest_json(path: Path) -> Any:
    """The parsed manifest, or ``None`` when it is not a readable regular file of JSON."""
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return None
        return loads_bounded(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _folder_entries(folder: Path) -> set[str]:
    """Every entry under ``folder`` as a relative POSIX path (folders too, no following)."""
    found: set[str] = set()
    for root, dirs, files in os.walk(folder, followlinks=False):
        rel = Path(root).relative_to(folder)
        for name in dirs + files:
            found.add((rel / name).as_posix())
    return found


def _ours(folder: Path) -> tuple[bool, str]:
    """Whether ``folder`` is a logic-rag index (and nothing else), with the reason if not."""
    manifest = _load_manifest_json(folder / MANIFEST_NAME)
    if not isinstance(manifest, dict):
        return False, f"its {MANIFEST_NAME} is not a logic-rag index manifest"
    version = manifest.get("format_version")
    files = manifest.get("files")
    marked = manifest.get("format") == FORMAT_NAME
    legacy = (
        version == 1
        and "documents_file" in manifest
        and "model" in manifest
        and "dimension" in manifest
    )
    if not (marked or legacy) or not isinstance(files, dict) or not files:
        return False, f"its {MANIFEST_NAME} is not a logic-rag index manifest"
    allowed = {MANIFEST_NAME}
    for name in files:
        try:
            check_name(name)
        except ValueError:
            return False, f"its {MANIFEST_NAME} lists {name!r}, which is not a plain name"
        parts = PurePosixPath(name).parts
        allowed.update("/".join(parts[: i + 1]) for i in range(len(parts)))
    if legacy:
        allowed |= _LEGACY_UNLISTED
    extra = sorted(_folder_entries(folder) - allowed)
    if extra:
        shown = ", ".join(extra[:5]) + (", ..." if len(extra) > 5 else "")
        return False, f"it holds files that are not part of an index ({shown})"
    for name in allowed - {MANIFEST_NAME}:
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISLNK((folder / name).lstat().st_mode):
                return False, f"{name} is a symbolic link"
    return True, ""


def is_index_folder(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a folder written by :func:`write_folder` and holds nothing else."""
    folder = Path(path)
    return folder.is_dir() and not folder.is_symlink() and _ours(folder)[0]


def has_index_manifest(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` holds a logic-rag index manifest, whatever else it holds (an
    index that someone wrote other files into still is one, for refusing to write there)."""
    manifest = _load_manifest_json(Path(path) / MANIFEST_NAME)
    return isinstance(manifest, dict) and manifest.get("format") == FORMAT_NAME


def check_out_dir(out_dir: str | os.PathLike[str]) -> Path:
    """Refuse an output folder that exists and is not a logic-rag index; call it early.

    Cleans (or recovers) the leftovers of an interrupted earlier write first. Returns the
    absolute path. ``FileExistsError`` names what is in the way; nothing is changed then.
    """
    out = Path(out_dir).absolute()
    recover_leftovers(out)
    if not out.exists() and not out.is_symlink():
        return out
    if out.is_symlink() or not out.is_dir():
        kind = "a symbolic link" if out.is_symlink() else "a file"
        raise FileExistsError(
            f"{out} exists and is {kind}, not a logic-rag index folder; choose another --out "
            f"or remove it yourself"
        )
    if not any(out.iterdir()):
        return out
    ok, why = _ours(out)
    if not ok:
        raise FileExistsError(
            f"{out} exists and is not a logic-rag index folder ({why}); choose another --out "
            f"or remove it yourself"
        )
    return out


# ------------------------------------------------------------------------------ leftovers
def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine is running (someone else's counts)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    except OSError:
        return False
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def swap_leftovers(out_dir: str | os.PathLike[str]) -> list[int]:
    """Process ids of the ``.OUT.tmp-PID-*`` / ``.OUT.old-PID`` folders next to ``out_dir``."""
    out = Path(out_dir).absolute()
    prefix = f".{out.name}."
    pids: list[int] = []
    try:
        names = [p.name for p in out.parent.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return pids
    for name in names:
        found = _TMP.fullmatch(name[len(prefix) :]) or _OLD.fullmatch(name[len(prefix) :])
        if found:
            pids.append(int(found.group(1)))
    return pids


def recover_leftovers(out_dir: str | os.PathLike[str]) -> list[str]:
    """Clean up after a :func:`write_folder` that was killed; returns what was done.

    - ``.OUT.tmp-PID-*`` (a half-written index) of a process that is gone: removed;
    - ``.OUT.old-PID`` (the previous index, moved aside just before the swap) of a
      process that is gone: put back as ``OUT`` when ``OUT`` is missing (the kill came
      between the two renames), removed when ``OUT`` is there (the kill came after).

    Folders of processes that are still running are left alone. Each action is logged
    as a warning (printed on stderr by the command line) and returned.
    """
    out = Path(out_dir).absolute()
    parent = out.parent
    prefix = f".{out.name}."
    done: list[str] = []
    try:
        siblings = sorted(p for p in parent.iterdir() if p.name.startswith(prefix))
    except OSError:
        return done
    olds = []
    for entry in siblings:
        rest = entry.name[len(prefix) :]
        tmp = _TMP.fullmatch(rest)
        if tmp or _LEGACY_TMP.fullmatch(rest):
            if tmp and pid_alive(int(tmp.group(1))):
                continue
            _remove(entry)
            done.append(f"removed {entry}, an unfinished index left by an interrupted run")
            continue
        old = _OLD.fullmatch(rest)
        if old and not pid_alive(int(old.group(1))):
            olds.append(entry)
    for entry in olds:
        if not out.exists() and not out.is_symlink() and is_index_folder(entry):
            os.replace(entry, out)
            done.append(
                f"recovered the index {out} from {entry} (a run was interrupted while replacing it)"
            )
        elif out.exists():
            _remove(entry)
            done.append(f"removed {entry}, a previous index left by an interrupted run")
    for message in done:
        log.warning("logic-rag: %s", message)
    return done


# ---------------------------------------------------------------------------------- write
def _listed_files(tmp: Path) -> Iterable[tuple[str, Path]]:
    for root, dirs, files in os.walk(tmp, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            path = Path(root) / name
            rel = path.relative_to(tmp).as_posix()
            if rel == MANIFEST_NAME:
                continue
            if path.is_symlink() or not path.is_file():
                raise IndexCorruptError(f"index writer produced {rel}, which is not a plain file")
            yield check_name(rel), path


def write_folder(
    out_dir: str | os.PathLike[str],
    writers: Mapping[str, Callable[[Path], None]],
    manifest: dict[str, Any],
) -> Path:
    """Write an index folder atomically.

    ``writers`` maps each file name to a function that writes that file at the path it is
    given. Every file they leave in the folder is listed in ``manifest["files"]`` with its
    checksum. An existing ``out_dir`` is replaced only if it is a logic-rag index folder
    holding nothing else (see :func:`check_out_dir`) or an empty folder, so a typo never
    deletes a user's data.
    """
    for name in writers:
        check_name(name)
    parent = Path(out_dir).parent
    parent.mkdir(parents=True, exist_ok=True)
    # Checked under the swap lock: another save to the same folder may be between its two
    # renames, when the folder is briefly absent or being replaced.
    with _swap_lock(parent):
        out = check_out_dir(out_dir)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-{os.getpid()}-", dir=out.parent))
    try:
        make_public_dir(tmp)
        for name, write in writers.items():
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            write(path)
        files = {
            name: {"sha256": file_sha256(path), "bytes": path.stat().st_size}
            for name, path in _listed_files(tmp)
        }
        if not files:
            raise ValueError("an index folder needs at least one file")
        body = {k: v for k, v in manifest.items() if k not in _RESERVED}
        full = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, **body, "files": files}
        atomic_write_json(tmp / MANIFEST_NAME, full)
        old = None
        with _swap_lock(out.parent):
            if out.exists() or out.is_symlink():
                # Another save may have swapped in its folder since check_out_dir: it
                # must still be ours (or empty) to be replaced.
                check_out_dir(out)
                old = out.with_name(f".{out.name}.old-{os.getpid()}")
                os.replace(out, old)
            os.replace(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


@contextlib.contextmanager
def _swap_lock(parent: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``parent`` (the folder the swap renames in) for the two
    renames of a save.

    Without it two processes saving to one ``--out`` interleaved their renames: one moved
    the other's new folder aside, or renamed its own onto a folder that had just appeared
    ("Directory not empty", ``FileNotFoundError``; 3 of 800 saves, issue 42 item 14). The
    lock is taken on the parent folder's own descriptor, so nothing is left behind, and
    only around the renames (milliseconds), so concurrent saves all succeed and the last
    one wins, as with one writer. A file system without ``flock`` on folders gets no lock.
    """
    try:
        fd = os.open(parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


# ----------------------------------------------------------------------------------- read
def _inside(folder: Path, name: str) -> Path:
    """``folder / name``, refusing symbolic links and anything that resolves elsewhere."""
    path = folder / name
    root = folder.resolve()
    current = folder
    for part in PurePosixPath(name).parts:
        current = current / part
        try:
            if stat.S_ISLNK(current.lstat().st_mode):
                raise IndexCorruptError(
                    f"{current} is a symbolic link; an index folder holds plain files only"
                )
        except FileNotFoundError:
            break
    if not path.resolve().is_relative_to(root):
        raise IndexCorruptError(f"{path} lies outside the index folder {folder}")
    return path


def check_manifest_table(folder: Path, manifest: Any) -> dict[str, Any]:
    """The checked ``files`` table of a parsed manifest (format, version, plain names)."""
    path = folder / MANIFEST_NAME
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise IndexCorruptError(f"{path} lacks the 'files' table; rebuild the index")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise IndexCorruptError(
            f"{path} has format version {version!r}; this logic-rag reads version "
            f"{FORMAT_VERSION}. Rebuild the index with this version."
        )
    if manifest.get("format") != FORMAT_NAME:
        raise IndexCorruptError(
            f"{path} lacks the format marker {FORMAT_NAME!r}; it is not a logic-rag index"
        )
    files = manifest["files"]
    if not files:
        raise IndexCorruptError(f"{path} has an empty 'files' table; rebuild the index")
    for name, meta in files.items():
        try:
            check_name(name)
        except ValueError:
            raise IndexCorruptError(
                f"{path} lists the file {name!r}, which is not a plain name inside the index "
                f"folder; the manifest was tampered with, rebuild the index"
            ) from None
        if (
            not isinstance(meta, dict)
            or not isinstance(meta.get("sha256"), str)
            or not _SHA256.fullmatch(meta["sha256"])
            or not isinstance(meta.get("bytes"), int)
            or isinstance(meta.get("bytes"), bool)
        ):
            raise IndexCorruptError(
                f"{path}: the entry for {name!r} needs 'sha256' (64 hex digits) and 'bytes'; "
                f"rebuild the index"
            )
    return files


def listed_file(folder: str | os.PathLike[str], manifest: Mapping[str, Any], name: Any) -> Path:
    """The path of ``name`` in ``folder``, only if it is a plain name in the checksum table.

    Loaders call this for every file they open, so an unlisted (unchecked) file is never
    read, and a name from the manifest can never point outside the folder.
    """
    folder = Path(folder)
    try:
        check_name(name)
    except ValueError:
        raise IndexCorruptError(
            f"{folder / MANIFEST_NAME} names the file {name!r}, which is not a plain name "
            f"inside the index folder; rebuild the index"
        ) from None
    if name not in manifest.get("files", {}):
        raise IndexCorruptError(
            f"{folder / name} is not in the checksum table of {folder / MANIFEST_NAME}; "
            f"rebuild the index"
        )
    return _inside(folder, name)
