"""How a saved index searches: its strategy and settings, in ``strategy.json``.

:meth:`LogicRetriever.save <logic_rag.logic_retriever.LogicRetriever.save>` writes this file
beside the manifest (listed and checksummed like every file of the folder) and
:meth:`LogicRetriever.load <logic_rag.logic_retriever.LogicRetriever.load>` restores it, so
a saved index remembers how it searches. The file::

    {"format": "logic-rag/strategy", "format_version": 1,
     "strategy": "verify",
     "settings": {"verify": {"type": "logic_rag.strategy_settings.VerifySettings",
                             "init_parameters": {"verifier_top": 40, ...}},
                  "rerank": {...}}}

Everything in it follows the one serialisation rule of stages, settings, verifiers and
adapters (Haystack's ``default_to_dict``: ``{"type", "init_parameters"}``).
``strategy`` is a named strategy, or a custom stage as ``Stage.to_dict`` writes it (rebuilt
by ``Stage.from_dict``, which loads only the allow-listed stage and verifier types);
``settings`` maps a strategy name to its settings (``StrategySettings.to_dict`` /
``from_dict``). A settings ``type`` is never imported: the class is the named strategy's in
:data:`~logic_rag.strategies.STRATEGIES` and the written type must name it, so nothing
outside that registry is constructed (a verifier inside, written as a dict, loads only
from the allow-list). A file of the first version, whose settings were the plain field
dicts, still loads. ``stage_settings`` (optional) holds the settings given with a custom
stage, the same way.

Settings that have no JSON form (a verifier whose values are Python objects) are left out, with a
warning that names them; a search after loading uses that strategy's defaults (or the
settings given to ``load``). An index saved before this file existed loads with the
defaults, as it always did; and a retriever that searches with the defaults (``rerank``,
no settings given) is saved without the file, so its folder is what it always was.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from logic_rag.errors import IndexCorruptError
from logic_rag.json_limits import loads_bounded
from logic_rag.pipeline.stage import Stage
from logic_rag.strategies import STRATEGIES
from logic_rag.strategy_settings import StrategySettings

__all__ = ["STRATEGY_FILE", "SavedStrategy", "is_default", "read_saved", "saved_record"]

STRATEGY_FILE = "strategy.json"
FORMAT_NAME = "logic-rag/strategy"
FORMAT_VERSION = 1
#: A strategy file larger than this is not one of ours (it holds a few settings).
MAX_BYTES = 4 * 2**20


@dataclass
class SavedStrategy:
    """What ``strategy.json`` restores: the strategy (a name or a stage), the settings by
    strategy name, and the settings given with a custom stage."""

    strategy: str | Stage
    settings: dict[str, StrategySettings] = field(default_factory=dict)
    stage_settings: StrategySettings | None = None


def strategy_name_of(settings: StrategySettings) -> str | None:
    """The first named strategy whose settings class ``settings`` is (None for none)."""
    for name, strategy in STRATEGIES.items():
        if type(settings) is strategy.settings:
            return name
    return None


def _entry(settings: StrategySettings, skipped: list[str]) -> tuple[str, dict[str, Any]] | None:
    name = strategy_name_of(settings)
    if name is None:
        skipped.append(f"{type(settings).__name__} (no named strategy's settings)")
        return None
    try:
        written = settings.to_dict()
        type(settings).from_dict(written)  # written only when it loads back
    except (TypeError, ValueError) as exc:  # a verifier no file may rebuild
        skipped.append(f"{type(settings).__name__} ({exc})")
        return None
    return name, written


def saved_record(
    strategy: str | Stage,
    settings: Iterable[StrategySettings],
    stage_settings: StrategySettings | None = None,
) -> dict[str, Any]:
    """The JSON record of ``strategy.json``; what has no JSON form is left out with a
    warning (see the module docstring)."""
    skipped: list[str] = []
    record: dict[str, Any] = {"format": FORMAT_NAME, "format_version": FORMAT_VERSION}
    if isinstance(strategy, str):
        record["strategy"] = strategy
    else:
        try:
            record["strategy"] = strategy.to_dict()
        except (TypeError, ValueError) as exc:
            skipped.append(f"the custom strategy {type(strategy).__name__} ({exc})")
            record["strategy"] = None
    record["settings"] = dict(e for e in (_entry(s, skipped) for s in settings) if e)
    if stage_settings is not None:
        entry = _entry(stage_settings, skipped)
        if entry is not None:
            record["stage_settings"] = dict([entry])
    if skipped:
        warnings.warn(
            "the index is saved without " + "; ".join(skipped) + ": loading it gives the "
            "defaults there (or what is passed to LogicRetriever.load)",
            UserWarning,
            stacklevel=3,
        )
    return record


def is_default(record: dict[str, Any]) -> bool:
    """Whether ``record`` says only what a folder without the file means: ``rerank`` with
    its default settings. Such a folder is saved without the file, as before it existed
    (and as the chunked builder writes one)."""
    return (
        record.get("strategy") in ("rerank", None)
        and not record.get("settings")
        and "stage_settings" not in record
    )


def _settings(raw: Any, where: str, what: str) -> dict[str, StrategySettings]:
    if not isinstance(raw, dict):
        raise IndexCorruptError(f"{where}: {what} is not an object")
    out: dict[str, StrategySettings] = {}
    for name, values in raw.items():
        if name not in STRATEGIES:
            raise IndexCorruptError(f"{where}: {what} names no strategy {str(name)[:80]!r}")
        try:
            out[name] = STRATEGIES[name].settings.from_dict(values)
        except (TypeError, ValueError) as exc:
            raise IndexCorruptError(f"{where}: {what} of {name!r}: {exc}") from None
    return out


def read_saved(snapshot: Any) -> SavedStrategy | None:
    """The strategy an opened index folder (``snapshot``) was saved with; None when the
    folder has no strategy file (saved before there was one, or by ``logic-rag index``
    without one). A damaged or foreign file raises :class:`IndexCorruptError`."""
    name = snapshot.manifest.get("strategy_file")
    if name is None:
        return None
    snapshot.check_listed(name)
    where = str(snapshot.display(name))
    if snapshot.size(name) > MAX_BYTES:
        raise IndexCorruptError(f"{where}: larger than {MAX_BYTES} bytes, not a strategy file")
    with snapshot.open(name) as handle:
        raw = handle.read()
    try:
        data = loads_bounded(raw, where)
    except ValueError as exc:  # JSONDecodeError, too deep, not UTF-8
        raise IndexCorruptError(f"{where}: not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise IndexCorruptError(f"{where}: not a logic-rag strategy file")
    if data.get("format_version") != FORMAT_VERSION:
        raise IndexCorruptError(
            f"{where}: strategy file version {data.get('format_version')!r}; this logic-rag "
            f"reads version {FORMAT_VERSION} (upgrade logic-rag, or save the index again)"
        )
    strategy = data.get("strategy")
    if strategy is None:
        strategy = "rerank"  # a custom stage that had no JSON form: the default
    elif isinstance(strategy, dict):
        try:
            strategy = Stage.from_dict(strategy)
        except (TypeError, ValueError) as exc:
            raise IndexCorruptError(f"{where}: its custom strategy: {exc}") from None
    elif not isinstance(strategy, str) or strategy not in STRATEGIES:
        raise IndexCorruptError(f"{where}: unknown strategy {str(strategy)[:80]!r}")
    saved = SavedStrategy(strategy, _settings(data.get("settings", {}), where, "settings"))
    if "stage_settings" in data:
        stage = _settings(data["stage_settings"], where, "stage_settings")
        if len(stage) != 1:
            raise IndexCorruptError(f"{where}: stage_settings holds {len(stage)} settings, not 1")
        saved.stage_settings = next(iter(stage.values()))
    return saved
