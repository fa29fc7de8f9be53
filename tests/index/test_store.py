"""Index folders: atomic writes, checksums, refusal to clobber user folders."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys

import pytest

from logic_rag.errors import IndexCorruptError
from logic_rag.index.snapshot import read_manifest
from logic_rag.index.store import (
    FORMAT_NAME,
    FORMAT_VERSION,
    MANIFEST_NAME,
    is_index_folder,
    listed_file,
    recover_leftovers,
    write_folder,
)


def _writer(text: str):
    return lambda path: path.write_text(text)


def test_write_and_verify(tmp_path):
    out = write_folder(tmp_path / "idx", {"a.txt": _writer("A"), "b.txt": _writer("B")}, {"k": 1})
    manifest = read_manifest(out)
    assert manifest["k"] == 1
    assert set(manifest["files"]) == {"a.txt", "b.txt"}


def test_modified_file_fails_its_checksum(tmp_path):
    out = write_folder(tmp_path / "idx", {"a.txt": _writer("AAAA")}, {})
    (out / "a.txt").write_text("AAAB")
    with pytest.raises(IndexCorruptError, match="checksum"):
        read_manifest(out)
    assert read_manifest(out, verify=False)  # opt-out for trusted, huge folders


def test_missing_file_and_bad_manifest(tmp_path):
    out = write_folder(tmp_path / "idx", {"a.txt": _writer("A")}, {})
    (out / "a.txt").unlink()
    with pytest.raises(IndexCorruptError, match="missing"):
        read_manifest(out)
    (out / MANIFEST_NAME).write_text("{not json")
    with pytest.raises(IndexCorruptError, match="not valid JSON"):
        read_manifest(out)
    (out / MANIFEST_NAME).write_text(json.dumps({"format_version": 99, "files": {}}))
    with pytest.raises(IndexCorruptError, match="format version 99"):
        read_manifest(out)


def test_failed_write_keeps_the_previous_index(tmp_path):
    out = write_folder(tmp_path / "idx", {"a.txt": _writer("old")}, {})

    def broken(path):
        path.write_text("half")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        write_folder(out, {"a.txt": broken}, {})
    assert (out / "a.txt").read_text() == "old"
    read_manifest(out)
    assert [p.name for p in tmp_path.iterdir()] == ["idx"]  # no temporary leftovers


def test_refuses_to_replace_a_folder_that_is_not_an_index(tmp_path):
    user = tmp_path / "important"
    user.mkdir()
    (user / "thesis.tex").write_text("precious")
    with pytest.raises(FileExistsError, match="not a logic-rag index"):
        write_folder(user, {"a.txt": _writer("A")}, {})
    assert (user / "thesis.tex").read_text() == "precious"


# ------------------------------------------------------------------- issue 18: d01, d04, d07
def test_refuses_a_browser_extension_folder_with_a_manifest(tmp_path):
    ext = tmp_path / "extension"
    (ext / "icons").mkdir(parents=True)
    (ext / MANIFEST_NAME).write_text('{"manifest_version": 3, "files": {"a.txt": {}}}')
    (ext / "background.js").write_text("js")
    with pytest.raises(FileExistsError, match="not a logic-rag index folder"):
        write_folder(ext, {"a.txt": _writer("A")}, {})
    assert sorted(p.name for p in ext.iterdir()) == ["background.js", "icons", MANIFEST_NAME]
    assert not is_index_folder(ext)


def test_refuses_an_index_folder_holding_anything_else(tmp_path):
    out = write_folder(tmp_path / "idx", {"a.txt": _writer("A")}, {})
    assert is_index_folder(out)
    (out / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="notes.txt"):
        write_folder(out, {"a.txt": _writer("B")}, {})
    assert (out / "notes.txt").read_text() == "mine"
    (out / "notes.txt").unlink()
    write_folder(out, {"a.txt": _writer("B")}, {})  # ours and nothing else: replaced
    assert (out / "a.txt").read_text() == "B"


def test_every_written_file_is_listed_with_a_format_marker(tmp_path):
    def two_files(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x")
        (path.parent / "side.json").write_text("{}")

    out = write_folder(tmp_path / "idx", {"sub/main.bin": two_files}, {"format": "evil"})
    manifest = read_manifest(out)
    assert manifest["format"] == FORMAT_NAME and manifest["format_version"] == FORMAT_VERSION
    assert set(manifest["files"]) == {"sub/main.bin", "sub/side.json"}


@pytest.mark.parametrize(
    "name", ["/etc/passwd", "../outside.txt", "a/../../x", "", ".hidden", "a\\b", "a//b"]
)
def test_manifest_names_must_be_plain(tmp_path, name):
    out = write_folder(tmp_path / "idx", {"a.txt": _writer("A")}, {})
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    manifest["files"][name] = {"sha256": "0" * 64, "bytes": 1}
    (out / MANIFEST_NAME).write_text(json.dumps(manifest))
    with pytest.raises(IndexCorruptError, match="not a plain name"):
        read_manifest(out)
    with pytest.raises(IndexCorruptError, match="not a plain name"):
        listed_file(out, manifest, name)


def test_empty_table_unlisted_files_and_symlinks_are_refused(tmp_path):
    out = write_folder(tmp_path / "idx", {"a.txt": _writer("A")}, {})
    manifest = json.loads((out / MANIFEST_NAME).read_text())
    with pytest.raises(IndexCorruptError, match="not in the checksum table"):
        listed_file(out, manifest, "b.txt")
    assert listed_file(out, manifest, "a.txt") == out / "a.txt"
    secret = tmp_path / "secret.txt"
    secret.write_text("A")
    (out / "a.txt").unlink()
    (out / "a.txt").symlink_to(secret)
    with pytest.raises(IndexCorruptError, match="symbolic link"):
        read_manifest(out)
    (out / MANIFEST_NAME).write_text(json.dumps({**manifest, "files": {}}))
    with pytest.raises(IndexCorruptError, match="empty 'files' table"):
        read_manifest(out)


def _dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    return int(proc.stdout)


def test_leftovers_of_a_killed_write_are_cleaned_or_recovered(tmp_path, caplog):
    out = write_folder(tmp_path / "idx", {"a.txt": _writer("good")}, {})
    pid = _dead_pid()
    (tmp_path / f".idx.tmp-{pid}-x1").mkdir()  # killed during save
    (tmp_path / ".idx.abcd1234.tmp").mkdir()  # the same, older naming
    (tmp_path / f".idx.tmp-{os.getpid()}-live").mkdir()  # a live writer: left alone
    (tmp_path / f".idx.v2.tmp-{pid}-x").mkdir()  # another folder's: not ours to touch
    os.replace(out, tmp_path / f".idx.old-{pid}")  # killed between the two renames
    with caplog.at_level(logging.WARNING):
        manifest = read_manifest(out)  # the next run puts the index back
    assert (out / "a.txt").read_text() == "good" and manifest["files"]
    assert "recovered the index" in caplog.text
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        f".idx.tmp-{os.getpid()}-live",
        f".idx.v2.tmp-{pid}-x",
        "idx",
    ]
    shutil.copytree(out, tmp_path / f".idx.old-{pid}")  # killed after the swap
    assert recover_leftovers(out) == [f"removed {tmp_path / f'.idx.old-{pid}'}, a previous index "
                                      "left by an interrupted run"]  # fmt: skip
