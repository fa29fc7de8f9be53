"""``python -m logic_rag.evals.world``: see :mod:`logic_rag.evals.world.cli`."""

from .cli import main

__all__: list[str] = []

if __name__ == "__main__":
    raise SystemExit(main())
