"""The recipes of the models logic-rag ships: ``logic-gemma`` and ``logic-verifier``.

Each is one seeded command that rebuilds its artifact from the shared data alone
(``$LOGIC_RAG_DATA``, default ``../shared/data``), writes a LoRA adapter folder with its card,
and, with ``--install``, copies it into the package (``logic_rag/shipped/NAME``) and prints
the SHA-256 pins the registry checks:

    logic-rag finetune logic-gemma --out runs/logic-gemma
    logic-rag finetune logic-verifier --out runs/logic-verifier
"""

from .logic_gemma import LogicGemmaArgs, train_logic_gemma
from .logic_verifier import LogicVerifierArgs, train_logic_verifier

__all__ = ["LogicGemmaArgs", "LogicVerifierArgs", "train_logic_gemma", "train_logic_verifier"]
