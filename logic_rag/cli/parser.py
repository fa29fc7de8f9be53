"""The ``logic-rag`` argument parser: the global flags, then each sub-command group's
parsers, added by its own module in the order ``--help`` lists them."""

from __future__ import annotations

import argparse
from typing import NoReturn

from logic_rag.cli import adapt, demo, evaluate, finetune, fit_cascade, index, models, search
from logic_rag.cli.common import positive_seconds


class OneLineErrors(argparse.ArgumentParser):
    """argparse with the project's error form: one ``logic-rag CMD: error: ...`` line and
    exit code 2, without the 9-15 usage lines argparse prints first (issue 51 item 18).
    Sub-command parsers are made of this class too."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed for tests and documentation)."""
    parser = OneLineErrors(
        prog="logic-rag",
        description="Retrieval for RAG that respects AND / OR / NOT in a query.",
    )
    parser.add_argument(
        "--deadline",
        type=positive_seconds,
        default=None,
        metavar="SECONDS",
        help="overall time limit of each request to an LLM server (openai: generators, all "
        "tries together; default 300), e.g. `logic-rag --deadline 60 eval rag ...`",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    index.add_parser(sub)
    search.add_parser(sub)
    evaluate.add_parser(sub)
    demo.add_parsers(sub)  # demo and world
    finetune.add_parser(sub)
    fit_cascade.add_parser(sub)
    adapt.add_parser(sub)
    models.add_parser(sub)
    return parser
