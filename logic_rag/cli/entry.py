"""``main``, the entry point of the ``logic-rag`` command: parse, check early, run the
sub-command, and turn a user's error into one ``logic-rag CMD: error: ...`` line and exit
code 2 (130 after Ctrl-C) instead of a traceback."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from logic_rag.cli.checks import check_early
from logic_rag.cli.common import one_line, quiet_model_loading
from logic_rag.cli.parser import build_parser

#: Optional dependencies and the extra that installs each.
EXTRAS = {
    "ir_measures": "eval",
    "matplotlib": "eval",
    "datasets": "train",
    "accelerate": "train",
    "llama_index": "llama-index",
    "langchain_core": "langchain",
    "ray": "ray",
    "pymilvus": "milvus",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``logic-rag`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from logic_rag.errors import LogicRagError

    if args.deadline is not None:
        from logic_rag.generators.base import set_default_deadline

        set_default_deadline(args.deadline)
    if getattr(args, "quiet", False):
        quiet_model_loading()  # quiet means quiet: no "Loading weights" bars either
    try:
        check_early(args)
        if getattr(args, "store_uri", None) is not None:
            from logic_rag.index.milvus_store import parse_store_uri

            parse_store_uri(args.store_uri)  # ftp://x was ignored without a word
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        # Writes are atomic: an interrupted index or results file leaves the old one.
        print(
            f"logic-rag {args.command}: interrupted; nothing half-written was kept", file=sys.stderr
        )
        return 130
    except (LogicRagError, FileNotFoundError, FileExistsError, ValueError) as exc:
        print(f"logic-rag {args.command}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except (PermissionError, IsADirectoryError, NotADirectoryError) as exc:
        print(f"logic-rag {args.command}: error: {one_line(exc)}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as exc:
        extra = EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        print(
            f"logic-rag {args.command}: error: this command needs {exc.name!r}; install it "
            f"with: pip install 'logic-rag[{extra}]'",
            file=sys.stderr,
        )
        return 2
    except OSError as exc:  # disk full, read-only or failing disk, too many open files ...
        return _os_error(args.command, exc)


def _os_error(command: str, exc: OSError) -> int:
    """One line naming the errno, the file and (disk full) what to do; exit code 2."""
    import errno

    name = errno.errorcode.get(exc.errno or 0, "OSError")
    where = f" ({exc.filename})" if exc.filename else ""
    hint = (
        "; free some space or write elsewhere (the previous files were kept)"
        if exc.errno in (errno.ENOSPC, errno.EDQUOT)
        else ""
    )
    print(
        f"logic-rag {command}: error: {name}: {exc.strerror or one_line(exc)}{where}{hint}",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
