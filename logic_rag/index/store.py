"""Index folders: a manifest, checksummed files, atomic replacement, no pickle.

An index folder holds the FAISS file, the documents as JSONL and ``manifest.json``
(model name and weights hash, dimension, normalisation, document count, SHA-256 of every
file). The whole folder is built in a temporary sibling and swapped in with renames, so
an interrupted ``save`` leaves the previous index intact. Loading verifies every
checksum before anything is parsed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from logic_rag.atomic import atomic_write_json, make_public_dir
from logic_rag.errors import IndexCorruptError

__all__ = ["MANIFEST_NAME", "FORMAT_VERSION", "file_sha256", "write_folder", "read_manifest"]

MANIFEST_NAME = "manifest.json"
FORMAT_VERSION = 1


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes."""
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def write_folder(
    out_dir: str | os.PathLike[str],
    writers: Mapping[str, Callable[[Path], None]],
    manifest: dict[str, Any],
) -> Path:
    """Write an index folder atomically.

    ``writers`` maps each file name to a function that writes that file at the path it is
    given. Their checksums are added to ``manifest["files"]``. An existing ``out_dir`` is
    replaced only if it is an index folder (holds a manifest) or is empty, so a typo never
    deletes a user's data.
    """
    out = Path(out_dir).resolve()
    if out.exists() and (
        not out.is_dir() or (any(out.iterdir()) and not (out / MANIFEST_NAME).exists())
    ):
        raise FileExistsError(
            f"{out} exists and is not a logic-rag index folder; choose another --out or "
            f"remove it yourself"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent))
    try:
        make_public_dir(tmp)
        files: dict[str, dict[str, Any]] = {}
        for name, write in writers.items():
            path = tmp / name
            write(path)
            files[name] = {"sha256": file_sha256(path), "bytes": path.stat().st_size}
        manifest = {"format_version": FORMAT_VERSION, **manifest, "files": files}
        atomic_write_json(tmp / MANIFEST_NAME, manifest)
        old = None
        if out.exists():
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            os.replace(out, old)
        os.replace(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out


def read_manifest(folder: str | os.PathLike[str], *, verify: bool = True) -> dict[str, Any]:
    """Read and check an index folder's manifest; with ``verify`` also every checksum."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder}: no such index folder; build one with `logic-rag index`")
    path = folder / MANIFEST_NAME
    if not path.is_file():
        raise IndexCorruptError(f"{folder} has no {MANIFEST_NAME}; it is not a logic-rag index")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise IndexCorruptError(f"{path} is not valid JSON ({exc}); rebuild the index") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        raise IndexCorruptError(f"{path} lacks the 'files' table; rebuild the index")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise IndexCorruptError(
            f"{path} has format version {version!r}; this logic-rag reads version "
            f"{FORMAT_VERSION}. Rebuild the index with this version."
        )
    for name, meta in manifest["files"].items():
        file = folder / name
        if not file.is_file():
            raise IndexCorruptError(f"{file} is missing; the index is incomplete, rebuild it")
        if verify:
            size = file.stat().st_size
            if size != meta.get("bytes") or file_sha256(file) != meta.get("sha256"):
                raise IndexCorruptError(
                    f"{file} does not match the checksum recorded in {MANIFEST_NAME} (the "
                    f"file is corrupt or was modified); rebuild the index with `logic-rag index`"
                )
    return manifest
