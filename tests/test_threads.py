"""logic_rag asks OpenMP to sleep at barriers, unless the user chose or torch came first."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from logic_rag.threads import prefer_passive_waits

_PROBE = "import os, {first}; print(os.environ.get('OMP_WAIT_POLICY'))"


def _policy(first: str, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    done = subprocess.run(
        [sys.executable, "-c", _PROBE.format(first=first)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_importing_logic_rag_first_makes_waits_passive() -> None:
    assert _policy("logic_rag, torch") == "PASSIVE"


def test_a_users_policy_is_kept() -> None:
    assert _policy("logic_rag", OMP_WAIT_POLICY="ACTIVE") == "ACTIVE"


def test_after_torch_it_changes_nothing() -> None:
    # torch's OpenMP runtime read the policy when it loaded: setting it now would be a lie
    assert _policy("torch, logic_rag") == "None"


def test_prefer_passive_waits_reports_the_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_WAIT_POLICY", "passive")
    assert prefer_passive_waits() is True
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert prefer_passive_waits() is False
