"""Choosing bf16 only where the hardware runs it, never float16."""

from __future__ import annotations

import pytest

from logic_rag.encoders import dtype


def test_float32_models_stay_float32(monkeypatch):
    monkeypatch.delenv("LOGIC_RAG_DTYPE", raising=False)
    assert dtype.choose_dtype("float32") == "float32"


@pytest.mark.parametrize("has_bf16, expected", [(True, "bfloat16"), (False, "float32")])
def test_bf16_models_follow_the_cpu(monkeypatch, has_bf16, expected):
    monkeypatch.delenv("LOGIC_RAG_DTYPE", raising=False)
    monkeypatch.setattr(dtype, "cpu_has_bf16", lambda: has_bf16)
    monkeypatch.setattr(dtype, "_cuda_default", lambda: False)
    assert dtype.choose_dtype("bfloat16", "cpu") == expected


def test_the_environment_overrides(monkeypatch):
    monkeypatch.setenv("LOGIC_RAG_DTYPE", "float32")
    assert dtype.choose_dtype("bfloat16") == "float32"
    monkeypatch.setenv("LOGIC_RAG_DTYPE", "float16")
    with pytest.raises(ValueError, match="float16 breaks"):
        dtype.choose_dtype("bfloat16")


def test_cpu_flags_are_read_from_proc(monkeypatch, tmp_path):
    fake = tmp_path / "cpuinfo"
    fake.write_text("processor : 0\nflags : fpu sse avx512f avx512_bf16\n")
    real_path = dtype.Path
    monkeypatch.setattr(dtype, "Path", lambda p: real_path(fake) if p == "/proc/cpuinfo" else p)
    dtype.cpu_has_bf16.cache_clear()
    try:
        assert dtype.cpu_has_bf16() is True
        fake.write_text("flags : fpu sse avx2\n")
        dtype.cpu_has_bf16.cache_clear()
        assert dtype.cpu_has_bf16() is False
    finally:
        dtype.cpu_has_bf16.cache_clear()
