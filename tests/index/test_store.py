"""Index folders: atomic writes, checksums, refusal to clobber user folders."""

from __future__ import annotations

import json

import pytest

from logic_rag.errors import IndexCorruptError
from logic_rag.index.store import MANIFEST_NAME, read_manifest, write_folder


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
