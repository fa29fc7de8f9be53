"""``python -m logic_rag`` runs the command line."""

import sys

from logic_rag.cli import main

sys.exit(main())
