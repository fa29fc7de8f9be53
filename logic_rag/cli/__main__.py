"""``python -m logic_rag.cli`` (and ``torchrun -m logic_rag.cli``) runs the command line."""

import sys

from logic_rag.cli.entry import main

sys.exit(main())
