"""Arguments of the fine-tuning recipes, as dataclasses (tevatron style).

One dataclass per recipe family keeps the command line, the Python API and the model card in
step: :mod:`.cli` turns every field into a ``--flag``, the recipes read the fields, and the
model card records ``dataclasses.asdict(args)`` verbatim. Defaults are chosen so that the
default recipe trains on 2 CPU cores in well under 20 minutes (``max_seq_length=128``, one
epoch); :meth:`validate` rejects bad values before any model is loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["ContrastiveArgs", "LoreArgs", "RecipeArgsError", "CONTRASTIVE_LOSSES"]

from logic_rag.errors import LogicRagError

CONTRASTIVE_LOSSES = ("supcon", "logicol", "logicol-noconstraints")
"""Losses of :func:`~logic_rag.finetune.recipes.contrastive.train_contrastive`.

``logicol-noconstraints`` is SupCon with logical-group batching and no constraint terms (the
LogiCoL paper's ablation)."""


class RecipeArgsError(LogicRagError, ValueError):
    """A recipe argument is out of range or names a file that does not exist."""


def _check_files(**paths: str | None) -> None:
    for flag, value in paths.items():
        if value is not None and not Path(value).is_file():
            raise RecipeArgsError(
                f"--{flag} {value}: no such file; pass an existing QUEST-format JSONL file"
            )


def _check_common(args: ContrastiveArgs | LoreArgs) -> None:
    _check_files(train=args.train, docs=args.docs, atoms=args.atoms)
    if not args.out:
        raise RecipeArgsError("--out is empty; pass the folder the run should write to")
    if args.epochs <= 0 and args.max_steps <= 0:
        raise RecipeArgsError("set --epochs > 0 or --max-steps > 0")
    for name in ("batch_size", "save_steps", "max_seq_length"):
        if getattr(args, name) < 1:
            raise RecipeArgsError(f"--{name.replace('_', '-')} must be >= 1")
    if args.lr <= 0 or args.temperature <= 0:
        raise RecipeArgsError("--lr and --temperature must be > 0")
    if args.limit is not None and args.limit < 1:
        raise RecipeArgsError("--limit must be >= 1 (or left out for all queries)")


@dataclass
class ContrastiveArgs:
    """SupCon / LogiCoL fine-tuning of a bi-encoder (both towers share weights).

    ``batching`` None means logical groups for ``logicol*`` and random batches for ``supcon``;
    ``alpha`` is the share of random queries in a group batch (LogiCoL's best: 0.5-0.7).

    The exclusion term's margin and temperature (``gamma_exclusion`` 2.0 nats,
    ``exclusion_temperature`` 0.05) differ from the paper's (0.2, softmax of raw cosines) on
    purpose. At temperature 1 the in-batch distributions are near uniform, the symmetric KL is ~0
    and its gradient vanishes; at 0.05 a 0.2 margin is met before training starts. Either way the
    term did nothing here (violation rate unchanged vs plain group batching); with these values it
    is active. Its weight keeps the paper's 0.1. Over three held-out WordNet builds at the default
    lr, 0.1 cuts SupCon's negation violations by 21% (29 -> 23 of 69) with R@20 +0.005 and R@100
    -0.007 (95% CI -0.014..+0.001). 1.0, the earlier default, cuts them by 34% but costs R@100
    -0.017 (CI -0.027..-0.007), mostly on unions and negations. On the generated world (240
    steps) 0.1 also did better than 1.0 (violations -12% vs -9%). Of the weights tried, 0.1 had
    the smallest R@100 cost on WordNet's validation split (README, Experiments). Pass the
    paper's margin and temperature to reproduce it.

    ``gather_across_devices`` matters only under ``torchrun`` / ``accelerate launch`` with more
    than one process: each process then contrasts its queries with the documents of all
    processes' batches (the global batch of ``batch_size * processes``), as a single process
    with that batch would. ``--no-gather-across-devices`` keeps in-batch negatives per process.

    ``query_only`` trains the query encoder alone; documents are embedded by a frozen copy of
    the base, so an index built with the base keeps serving the tuned model (the folder carries
    ``logic_rag_encoder.json``, as a LORE model does). It is how EmbeddingGemma is tuned on
    CPU: the document side costs a forward pass, and the corpus is never re-encoded.
    """

    train: str
    docs: str
    out: str
    base: str = "minilm"
    loss: str = "logicol"
    atoms: str | None = None
    variants: bool = False
    batching: str | None = None
    alpha: float = 0.6
    epochs: float = 1.0
    max_steps: int = -1
    batch_size: int = 32
    lr: float = 5e-5
    temperature: float = 0.05
    lambda_subset: float = 0.1
    lambda_exclusion: float = 0.1
    gamma_subset: float = 0.2
    gamma_exclusion: float = 2.0
    exclusion_temperature: float = 0.05
    cached: bool = False
    mini_batch_size: int = 32
    gather_across_devices: bool = True
    save_steps: int = 50
    save_total_limit: int = 2
    #: Keep ``OUT/checkpoints`` after the model is published. They exist to resume an
    #: interrupted run; once ``OUT/model`` is written they are dead weight (an
    #: EmbeddingGemma checkpoint with its optimiser state is ~3.6 GB), so they go.
    keep_checkpoints: bool = False
    seed: int = 0
    limit: int | None = None
    resume: bool = True
    max_seq_length: int = 128
    warmup_ratio: float = 0.1
    hard_negatives: bool = False
    mined_negatives: int = 4
    query_only: bool = False
    #: LoRA rank; 0 fine-tunes every weight. With a rank, only low-rank adapters on the
    #: transformer's linear layers train (everything else is frozen) and ``OUT/model`` holds
    #: the adapter alone, a few MB over the base: how the shipped ``logic-gemma`` stays small.
    lora_rank: int = 0
    #: LoRA scaling numerator (the update is scaled by ``lora_alpha / lora_rank``).
    lora_alpha: int = 32

    @property
    def effective_batching(self) -> str:
        """``groups`` or ``random``, resolving the default from the loss."""
        if self.batching is not None:
            return self.batching
        return "random" if self.loss == "supcon" else "groups"

    def validate(self) -> None:
        """Raise :class:`RecipeArgsError` naming the flag that is wrong."""
        if self.loss not in CONTRASTIVE_LOSSES:
            raise RecipeArgsError(
                f"--loss {self.loss!r}: choose one of {', '.join(CONTRASTIVE_LOSSES)}"
            )
        if self.batching not in (None, "groups", "random"):
            raise RecipeArgsError(f"--batching {self.batching!r}: choose groups or random")
        if not 0.0 <= self.alpha <= 1.0:
            raise RecipeArgsError(f"--alpha {self.alpha}: the share of random queries, in [0, 1]")
        if self.mined_negatives < 0:
            raise RecipeArgsError("--mined-negatives must be >= 0")
        if self.mini_batch_size < 1 or self.save_total_limit < 1:
            raise RecipeArgsError("--mini-batch-size and --save-total-limit must be >= 1")
        if min(self.lambda_subset, self.lambda_exclusion) < 0:
            raise RecipeArgsError("--lambda-subset and --lambda-exclusion must be >= 0")
        if self.variants and self.atoms is None:
            raise RecipeArgsError("--variants builds Quest+Variants from --atoms; pass --atoms")
        if self.exclusion_temperature <= 0:
            raise RecipeArgsError("--exclusion-temperature must be > 0")
        if self.lora_rank < 0 or self.lora_alpha < 1:
            raise RecipeArgsError("--lora-rank must be >= 0 (0: no adapter) and --lora-alpha >= 1")
        if self.query_only and self.cached:
            raise RecipeArgsError(
                "--query-only and --cached do not combine: the frozen document side needs no "
                "gradient cache; drop --cached"
            )
        _check_common(self)


@dataclass
class LoreArgs:
    """LORE: tiered contrastive training of the query encoder; documents stay on the base.

    ``lr`` 5e-5: at 2e-5, 150 steps moved distractor R@5 on the held-out world split by
    only -23% (-30% after 300 steps); 5e-5 reaches -31% in 150 steps there and -69% on
    held-out WordNet queries, with positive R@5 up in both.

    ``gather_across_devices``: LORE has no in-batch negatives, so under ``torchrun`` it only
    makes the loss the mean over the global batch's queries (exact also when processes hold
    batches of different sizes); it has no effect in a single process.
    """

    train: str
    docs: str
    out: str
    base: str = "minilm"
    atoms: str | None = None
    beta: float = 3.0
    alpha: float = 1.0
    temperature: float = 0.05
    num_distractors: int = 3
    num_negatives: int = 4
    gather_across_devices: bool = True
    epochs: float = 1.0
    max_steps: int = -1
    batch_size: int = 16
    lr: float = 5e-5
    save_steps: int = 50
    save_total_limit: int = 2
    #: As :attr:`ContrastiveArgs.keep_checkpoints`.
    keep_checkpoints: bool = False
    seed: int = 0
    limit: int | None = None
    resume: bool = True
    max_seq_length: int = 128
    warmup_ratio: float = 0.1

    def validate(self) -> None:
        """Raise :class:`RecipeArgsError` naming the flag that is wrong."""
        if self.beta <= 0 or self.alpha <= 0:
            raise RecipeArgsError("--beta and --alpha must be > 0 (paper: beta 3 > alpha 1)")
        if self.num_distractors < 0 or self.num_negatives < 0:
            raise RecipeArgsError("--num-distractors and --num-negatives must be >= 0")
        if self.num_distractors + self.num_negatives == 0:
            raise RecipeArgsError("need at least one distractor or negative per query")
        if self.save_total_limit < 1:
            raise RecipeArgsError("--save-total-limit must be >= 1")
        _check_common(self)
