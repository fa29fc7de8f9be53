"""LORE tiered contrastive loss: positives above distractors above plain negatives, query side only.

LORE (Zhang et al. 2026) fine-tunes only the query encoder. Each query comes with three tiers
of candidates: positives ``P``, distractors ``N1`` (look relevant, e.g. satisfy the atoms but
not the connective) and negatives ``N2``. With ``l = cos(q, d) / tau`` the loss for a positive
``p`` is an InfoNCE in which positives are excluded from each other's denominators and the
negative tiers are weighted:

    l(p) = -log( e^{l_p} / (e^{l_p} + beta * sum_{N1} e^{l_n} + alpha * sum_{N2} e^{l_n}) )

i.e. distractor logits get ``+ log beta`` and negative logits ``+ log alpha``; with
``beta = 3 > alpha = 1`` distractors are pushed harder, giving the order P > N1 > N2. The loss
of a query is the mean over its positives, and the batch loss the mean over queries (a query
without positives contributes 0, as in the authors' code, github.com/mazehart/Lore-RAG). Only
the query's own candidates are contrasted (no in-batch negatives), as in that code.

Document embeddings come from a frozen document encoder, under ``no_grad`` and in eval mode.
By default it is a frozen copy of the model taken when the loss is built, i.e. the base model:
the document vectors of an index built with the base model stay valid, and only the query
encoder (``model``) changes.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable, Sequence
from typing import Any

import torch
from torch import Tensor, nn

from logic_rag.finetune.losses.distributed import distributed_world_size, global_count

__all__ = [
    "LoreLoss",
    "lore_loss",
    "lore_per_query",
    "POSITIVE",
    "DISTRACTOR",
    "NEGATIVE",
    "IGNORE",
]

POSITIVE = 1
"""Tier label of a positive candidate (P)."""
DISTRACTOR = 0
"""Tier label of a distractor (N1): looks relevant, is not."""
NEGATIVE = -1
"""Tier label of a plain negative (N2)."""
IGNORE = -100
"""Tier label of a padding candidate (e.g. an empty string for a query with fewer candidates)."""

LORE_CITATION = """
@misc{zhang2026lore,
    title={Logic-Oriented Retriever Enhancement via Contrastive Learning},
    author={Wenxuan Zhang and Yuan-Hao Jiang and Changyong Qi and Rui Jia and Yonghe Wu},
    year={2026},
    eprint={2602.01116},
    archivePrefix={arXiv},
    primaryClass={cs.IR}
}
"""


def lore_per_query(
    cos: Tensor, tiers: Tensor, temperature: float, beta: float, alpha: float
) -> Tensor:
    """``[B]`` per-query tiered losses from ``[B, C]`` cosines and ``[B, C]`` tier labels."""
    logits = cos / temperature
    neg_inf = torch.finfo(logits.dtype).min
    weighted = torch.where(
        tiers == DISTRACTOR,
        logits + math.log(beta),
        torch.where(tiers == NEGATIVE, logits + math.log(alpha), torch.full_like(logits, neg_inf)),
    )
    has_neg = ((tiers == DISTRACTOR) | (tiers == NEGATIVE)).any(dim=1, keepdim=True)
    log_denominator = torch.logsumexp(weighted, dim=1, keepdim=True)  # log of the weighted sum
    # -log(e^lp / (e^lp + S)) = softplus(log S - lp); no negatives -> S = 0 -> loss 0.
    per_candidate = torch.where(
        has_neg, nn.functional.softplus(log_denominator - logits), torch.zeros_like(logits)
    )
    pos = (tiers == POSITIVE).to(logits.dtype)
    num_pos = pos.sum(dim=1)
    return (per_candidate * pos).sum(dim=1) / num_pos.clamp_min(1.0)


def lore_loss(cos: Tensor, tiers: Tensor, temperature: float, beta: float, alpha: float) -> Tensor:
    """Tiered loss from ``[B, C]`` cosines and ``[B, C]`` tier labels (see the module docstring)."""
    return lore_per_query(cos, tiers, temperature, beta, alpha).mean()


class LoreLoss(nn.Module):
    """LORE tiered contrastive loss with a frozen document encoder.

    Args:
        model: the SentenceTransformer being trained; it encodes queries only.
        document_model: the frozen document encoder. None (default): a frozen deep copy of
            ``model`` taken now, so build the loss before training starts. Pass the base model
            an existing index was built with to keep that index valid.
        temperature: tau (paper: 0.05).
        beta: weight of distractor (N1) terms (paper: 3).
        alpha: weight of negative (N2) terms (paper: 1).
        column_tiers: tier of each candidate column when the dataset has no label column, e.g.
            ``(POSITIVE, DISTRACTOR, NEGATIVE, NEGATIVE)``.
        gather_across_devices: under DDP (world size > 1), normalise by the global batch.
            LORE has no in-batch negatives (each query meets only its own candidates) and the
            document side is frozen, so nothing needs gathering but the number of queries:
            each rank returns ``W * (sum of its per-query losses) / N_global``, whose mean over
            the ``W`` ranks is the single-process loss on the global batch, and DDP's gradient
            averaging turns the per-rank gradients into the single-process gradient even when
            ranks hold batches of different sizes. Without it each rank's loss is its local
            mean, which is the same thing when every rank holds ``N / W`` queries.

    Inputs: ``(query, candidate_1, ..., candidate_C)``. Labels: one list of ``C`` tier labels
    per row (``1`` positive, ``0`` distractor, ``-1`` negative, ``-100`` padding), or none with
    ``column_tiers``.
    """

    def __init__(
        self,
        model: Any,
        document_model: Any | None = None,
        temperature: float = 0.05,
        beta: float = 3.0,
        alpha: float = 1.0,
        column_tiers: Sequence[int] | None = None,
        gather_across_devices: bool = False,
    ) -> None:
        super().__init__()
        if temperature <= 0 or beta <= 0 or alpha <= 0:
            raise ValueError(
                f"temperature, beta and alpha must be > 0, got {temperature}, {beta}, {alpha}"
            )
        if column_tiers is not None:
            bad = [t for t in column_tiers if t not in (POSITIVE, DISTRACTOR, NEGATIVE, IGNORE)]
            if bad:
                raise ValueError(f"column_tiers has unknown tier labels {bad}; use 1, 0, -1, -100")
        self.model = model
        self.document_model_is_copy = document_model is None
        doc_model = copy.deepcopy(model) if document_model is None else document_model
        doc_model.requires_grad_(False)
        doc_model.eval()
        self.document_model = doc_model
        self.temperature = float(temperature)
        self.beta = float(beta)
        self.alpha = float(alpha)
        self.column_tiers = None if column_tiers is None else tuple(int(t) for t in column_tiers)
        self.gather_across_devices = bool(gather_across_devices)

    def train(self, mode: bool = True) -> LoreLoss:
        """Switch the query side; the document encoder always stays in eval mode (no dropout)."""
        super().train(mode)
        self.document_model.eval()
        return self

    def _tiers(self, labels: Any, batch_size: int, num_candidates: int, device: Any) -> Tensor:
        if labels is None:
            if self.column_tiers is None:
                raise ValueError(
                    "LoreLoss needs tier labels: a 'label' column with one list of tiers per row "
                    "(1 positive, 0 distractor, -1 negative, -100 padding) or column_tiers=..."
                )
            tiers = torch.tensor(self.column_tiers, device=device).expand(batch_size, -1)
        else:
            tiers = torch.as_tensor(labels, device=device).long()
            if tiers.ndim == 1:
                tiers = tiers.unsqueeze(0).expand(batch_size, -1)
        if tuple(tiers.shape) != (batch_size, num_candidates):
            raise ValueError(
                f"tier labels have shape {tuple(tiers.shape)}, expected ({batch_size}, "
                f"{num_candidates}): one tier per candidate column"
            )
        return tiers

    def embed_documents(self, sentence_features: Iterable[dict[str, Tensor]]) -> Tensor:
        """``[B, C, dim]`` candidate embeddings from the frozen document encoder."""
        self.document_model.eval()
        with torch.no_grad():
            columns = [self.document_model(f)["sentence_embedding"] for f in sentence_features]
        return torch.stack(columns, dim=1)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Any = None) -> Tensor:
        features = list(sentence_features)
        if len(features) < 2:
            raise ValueError(f"expected (query, candidates...) columns, got {len(features)}")
        queries = self.model(features[0])["sentence_embedding"]
        docs = self.embed_documents(features[1:])
        return self.compute_loss_from_embeddings(queries, docs, labels)

    def compute_loss_from_embeddings(self, queries: Tensor, docs: Tensor, labels: Any) -> Tensor:
        """Loss from ``[B, dim]`` query and ``[B, C, dim]`` candidate embeddings."""
        q = nn.functional.normalize(queries, p=2, dim=-1)
        d = nn.functional.normalize(docs, p=2, dim=-1)
        cos = torch.einsum("bh,bch->bc", q, d)
        tiers = self._tiers(labels, cos.shape[0], cos.shape[1], cos.device)
        per_query = lore_per_query(cos, tiers, self.temperature, self.beta, self.alpha)
        world = distributed_world_size() if self.gather_across_devices else 1
        if world == 1:
            return per_query.mean()
        return per_query.sum() * world / global_count(per_query.shape[0], per_query.device)

    def get_config_dict(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "beta": self.beta,
            "alpha": self.alpha,
            "column_tiers": self.column_tiers,
            "gather_across_devices": self.gather_across_devices,
            "document_model": "frozen copy of the initial model"
            if self.document_model_is_copy
            else "given frozen model",
        }

    @property
    def citation(self) -> str:
        return LORE_CITATION
