"""``logic-rag models``: the offline model registry with each model's provenance, and
``--fetch``, the one set-up step that uses the network."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from logic_rag.cli.common import one_line


def add_parser(sub: Any) -> None:
    """``models`` on the sub-command parsers ``sub``."""
    p = sub.add_parser(
        "models",
        help="list the offline model registry with each model's provenance",
        description="For every short name: the published model and revision it is, its "
        "licence, the packages that carry it, the SHA-256 of its weight files (checked on "
        "every load) and whether it is installed here.",
    )
    p.add_argument("--json", action="store_true", help="print the listing as JSON")
    p.add_argument(
        "--fetch",
        metavar="NAME",
        help="set-up step: download and assemble a model that no package installs "
        "(embeddinggemma-300m); the only command that uses the network",
    )
    p.add_argument(
        "--from",
        dest="wheels",
        metavar="DIR",
        help="with --fetch: assemble from wheels already downloaded into DIR (offline)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """List the registry (text or ``--json``), or fetch one model."""
    from logic_rag.models import MODELS

    if args.wheels and not args.fetch:
        raise ValueError("--from needs --fetch NAME")
    if args.fetch:
        spec = MODELS.get(args.fetch.strip().lower())
        if spec is None or spec.fetch is None:
            fetchable = ", ".join(n for n, s in MODELS.items() if s.fetch is not None)
            raise ValueError(
                f"--fetch {args.fetch!r}: only {fetchable} need fetching; the other models "
                f"come with their pip packages"
            )
        resolved = spec.fetch(Path(args.wheels) if args.wheels else None)
        print(f"{spec.name} ready at {resolved.path}")
        return 0
    rows = listing()
    if args.json:
        json.dump(rows, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    for row in rows:
        mark = " [default]" if row["default"] else ""
        print(f"{row['name']:<20} {row['kind']:<10} {row['description']}{mark}")
        if "alias_of" in row:
            continue
        print(f"    published  {row['published']}")
        print(f"    revision   {row['revision']}")
        print(f"    licence    {row['licence']}")
        print(f"    packages   {'; '.join(row['packages'])}")
        for i, f in enumerate(row["files"]):
            print(f"    {'sha256' if i == 0 else '':<10} {f['sha256']}  {f['file']}")
        where = row["path"] if row["installed"] else f"no: {row['install']}"
        print(f"    installed  {where}")
    return 0


def listing() -> list[dict[str, Any]]:
    """A row per registered name: provenance, pinned files and where it is installed."""
    from logic_rag.errors import ModelNotFoundError
    from logic_rag.models import DEFAULT_SPARSE_MODEL, MODELS, default_dense_model, pinned_files

    defaults = {default_dense_model(), DEFAULT_SPARSE_MODEL}
    rows = []
    for spec in MODELS.values():
        row: dict[str, Any] = {
            "name": spec.name,
            "kind": spec.kind,
            "description": spec.description,
            "default": spec.name in defaults,
        }
        if spec.alias_of:
            rows.append({**row, "alias_of": spec.alias_of})
            continue
        try:
            resolved = spec.locate()
            files = [
                {"file": name, "path": str(path), "sha256": sha}
                for name, path, sha in pinned_files(spec, resolved)
            ]
            where = resolved.adapter if resolved.adapter is not None else resolved.path
            installed: dict[str, Any] = {"installed": True, "path": str(where)}
        except ModelNotFoundError as exc:
            files = [{"file": n, "sha256": pin.sha256} for n, pin in sorted(spec.pinned.items())]
            installed = {"installed": False, "install": spec.install, "why": one_line(exc)}
        rows.append(
            {
                **row,
                "published": spec.published,
                "revision": spec.revision or "not recorded",
                "licence": spec.licence,
                "packages": list(spec.packages),
                "files": files,
                **installed,
            }
        )
    return rows
