"""LogiCoL: supervised contrastive learning plus two t-norm regularisers for logical consistency.

Shen et al. (2025) add to multi-positive SupCon two soft constraints between in-batch queries
that share atoms, written as hinge losses (the product t-norm turns "for all documents d,
s(q1,d) <= s(q2,d)" into a sum of log-differences):

* subset, for ``q1 ⊂ q2`` (gold(q1) ⊆ gold(q2), e.g. ``A ∧ B ⊂ A``): a document cannot be more
  relevant to the narrower query,
  ``L_S = mean_{(q1,q2)} mean_{d in D} max(0, log s~(q1,d) - log s~(q2,d) + gamma_s)``
  with ``s~ = (cos + 1) / 2`` mapped into (0, 1] (clamped at 1e-8) and ``D`` all in-batch
  documents;
* exclusion, for mutually exclusive ``q1, q2`` (``A ∖ B`` vs ``A ∧ B``): their distributions
  over the in-batch documents, ``p_q = softmax(cos(q, D) / tau_e)``, must differ,
  ``L_E = mean_{(q1,q2)} max(0, gamma_e - 1/2 (KL(p1||p2) + KL(p2||p1)))``.

``L = L_SupCon + lambda_E L_E + lambda_S L_S`` with lambda = 0.1 and margins 0.2. These forms
follow the authors' released code (github.com/yanzhen4/LogiCoL, ``model/losses.py``): the
(cos+1)/2 mapping, the mean over documents, the 1/2-symmetrised KL and the softmax of raw
cosines (``tau_e = 1``). Two differences, both deliberate: we compute ``log p`` with
``log_softmax`` instead of clamping ``p`` at 1e-8 (identical unless p < 1e-8), and the authors'
code multiplies each regulariser by an extra ``scale=0.5`` that we fold into lambda
(``lambda=0.1`` here is ``weight=0.2, scale=0.5`` there).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from logic_rag.finetune.losses.relations import BatchRelations, RelationProvider
from logic_rag.finetune.losses.supcon import (
    MultiPositiveSupConLoss,
    cosine_scores,
    multi_positive_supcon,
)

__all__ = ["LogiCoLLoss", "logicol_components"]

LOGICOL_CITATION = """
@inproceedings{shen-etal-2025-logicol,
    title={{L}ogi{C}o{L}: Logically-Informed Contrastive Learning for Set-based Dense Retrieval},
    author={Shen, Yanzhen and Chen, Sihao and Xu, Xueqiang and Zhang, Yunyi and
            Malaviya, Chaitanya and Roth, Dan},
    booktitle={Proceedings of the 2025 Conference on Empirical Methods in Natural Language Processing},
    year={2025},
    address={Suzhou, China},
    publisher={Association for Computational Linguistics},
    url={https://aclanthology.org/2025.emnlp-main.608/},
    pages={12125--12136}
}
"""


def subset_hinge(cos: Tensor, subset: Tensor, margin: float) -> Tensor:
    """Mean over subset pairs (i ⊂ j) and documents of max(0, log s~(i,d) - log s~(j,d) + margin)."""
    rows, cols = subset.nonzero(as_tuple=True)
    if rows.numel() == 0:
        return cos.new_zeros(())
    log_sim = torch.log(((cos + 1.0) / 2.0).clamp_min(1e-8))
    return torch.relu(log_sim[rows] - log_sim[cols] + margin).mean()


def exclusion_hinge(cos: Tensor, exclusion: Tensor, margin: float, temperature: float) -> Tensor:
    """Mean over exclusive pairs of max(0, margin - symmetric KL of in-batch score distributions)."""
    rows, cols = exclusion.nonzero(as_tuple=True)
    if rows.numel() == 0:
        return cos.new_zeros(())
    log_p = torch.log_softmax(cos / temperature, dim=1)
    lp1, lp2 = log_p[rows], log_p[cols]
    kl12 = (lp1.exp() * (lp1 - lp2)).sum(dim=1)
    kl21 = (lp2.exp() * (lp2 - lp1)).sum(dim=1)
    return torch.relu(margin - 0.5 * (kl12 + kl21)).mean()


def logicol_components(
    queries: Tensor,
    docs: Tensor,
    relations: BatchRelations,
    *,
    temperature: float = 0.05,
    exclusion_weight: float = 0.1,
    subset_weight: float = 0.1,
    exclusion_margin: float = 0.2,
    subset_margin: float = 0.2,
    exclusion_temperature: float = 1.0,
) -> dict[str, Tensor]:
    """The three LogiCoL terms and their weighted total, from embeddings and checked relations."""
    rel = relations.checked(queries.shape[0], docs.shape[0], queries.device)
    cos = cosine_scores(queries, docs)
    supcon = multi_positive_supcon(cos, rel.positive, temperature)
    exclusion = exclusion_hinge(cos, rel.exclusion, exclusion_margin, exclusion_temperature)
    subset = subset_hinge(cos, rel.subset, subset_margin)
    total = supcon + exclusion_weight * exclusion + subset_weight * subset
    return {"supcon": supcon, "exclusion": exclusion, "subset": subset, "total": total}


class LogiCoLLoss(MultiPositiveSupConLoss):
    """LogiCoL loss: multi-positive SupCon + lambda_E * exclusion hinge + lambda_S * subset hinge.

    Args:
        model: the SentenceTransformer being trained.
        relations: label tensor -> :class:`BatchRelations` (positives, subset, exclusion), e.g.
            :class:`~logic_rag.finetune.losses.relations.GoldSetRelations`.
        temperature: SupCon temperature.
        exclusion_weight, subset_weight: lambda_E, lambda_S (paper: 0.1).
        exclusion_margin, subset_margin: gamma_e, gamma_s (paper: 0.2).
        exclusion_temperature: temperature of the per-query softmax over in-batch documents in
            the exclusion term; 1.0 reproduces the authors' code (softmax of raw cosines).
        gather_across_devices: gather the global batch across DDP ranks, as in
            :class:`~logic_rag.finetune.losses.supcon.MultiPositiveSupConLoss`; the subset and
            exclusion pairs are then found among all queries of the global batch.
        frozen_documents: tune the query side only, documents on a frozen copy of the base
            (see :class:`~logic_rag.finetune.losses.supcon.MultiPositiveSupConLoss`).

    Inputs: ``(query, positive)`` pairs (+ optional hard-negative columns); label column
    ``[query_id, positive_doc_id, group_id]``. Use with
    :class:`~logic_rag.finetune.sampler.LogicalGroupBatchSampler` so that related queries meet
    in a batch; with random batches the regularisers are almost always zero.
    """

    def __init__(
        self,
        model: Any,
        relations: RelationProvider | None = None,
        temperature: float = 0.05,
        exclusion_weight: float = 0.1,
        subset_weight: float = 0.1,
        exclusion_margin: float = 0.2,
        subset_margin: float = 0.2,
        exclusion_temperature: float = 1.0,
        gather_across_devices: bool = False,
        frozen_documents: bool = False,
    ) -> None:
        super().__init__(
            model,
            temperature=temperature,
            relations=relations,
            gather_across_devices=gather_across_devices,
            frozen_documents=frozen_documents,
        )
        if exclusion_temperature <= 0:
            raise ValueError(f"exclusion_temperature must be > 0, got {exclusion_temperature}")
        if min(exclusion_weight, subset_weight) < 0:
            raise ValueError("exclusion_weight and subset_weight must be >= 0")
        self.exclusion_weight = float(exclusion_weight)
        self.subset_weight = float(subset_weight)
        self.exclusion_margin = float(exclusion_margin)
        self.subset_margin = float(subset_margin)
        self.exclusion_temperature = float(exclusion_temperature)

    def components(self, queries: Tensor, docs: Tensor, labels: Any) -> dict[str, Tensor]:
        """The weighted total and each term; handy for logging and for tests."""
        rel = self.batch_relations(labels, queries.shape[0], docs.shape[0], queries.device)
        return logicol_components(
            queries,
            docs,
            rel,
            temperature=self.temperature,
            exclusion_weight=self.exclusion_weight,
            subset_weight=self.subset_weight,
            exclusion_margin=self.exclusion_margin,
            subset_margin=self.subset_margin,
            exclusion_temperature=self.exclusion_temperature,
        )

    def compute_loss_from_embeddings(self, queries: Tensor, docs: Tensor, labels: Any) -> Tensor:
        return self.components(*self.gather(queries, docs, labels))["total"]

    def get_config_dict(self) -> dict[str, Any]:
        return {
            **super().get_config_dict(),
            "exclusion_weight": self.exclusion_weight,
            "subset_weight": self.subset_weight,
            "exclusion_margin": self.exclusion_margin,
            "subset_margin": self.subset_margin,
            "exclusion_temperature": self.exclusion_temperature,
        }

    @property
    def citation(self) -> str:
        return LOGICOL_CITATION
