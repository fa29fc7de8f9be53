"""Multi-positive supervised contrastive loss (SupCon, "L_out" form) for query -> document retrieval.

Set retrieval has many gold documents per query, and in a batch built from logically related
queries a document sampled as the positive of one query is often gold for others too. Plain
in-batch InfoNCE would push those documents away; SupCon counts every in-batch gold document
as a positive. Per query ``q`` with positives ``P(q)`` among the batch documents ``D``:

    L(q) = -1/|P(q)| * sum_{p in P(q)} log( exp(s(q,p)/tau) / sum_{d in D} exp(s(q,d)/tau) )

(Khosla et al. 2020, Eq. 2, the ``L_out`` variant with ``1/|P|`` outside the log, which the
paper found better), with ``s`` the cosine similarity and the anchors being the queries only;
the loss is the mean of ``L(q)`` over the batch queries. The LogiCoL authors' code contrasts
queries and documents jointly (documents as anchors too); we keep the retrieval direction
only, the form used by sentence-transformers' MultipleNegativesRankingLoss, to which this
loss reduces when every query has just its own positive.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import torch
from torch import Tensor, nn

from logic_rag.finetune.losses.distributed import distributed_world_size, gather_in_batch
from logic_rag.finetune.losses.relations import (
    BatchRelations,
    RelationProvider,
    resolve_relations,
)

__all__ = ["MultiPositiveSupConLoss", "multi_positive_supcon"]

SUPCON_CITATION = """
@inproceedings{khosla2020supervised,
    title={Supervised Contrastive Learning},
    author={Khosla, Prannay and Teterwak, Piotr and Wang, Chen and Sarna, Aaron and Tian, Yonglong
            and Isola, Phillip and Maschinot, Aaron and Liu, Ce and Krishnan, Dilip},
    booktitle={Advances in Neural Information Processing Systems},
    volume={33},
    pages={18661--18673},
    year={2020}
}
"""


def cosine_scores(queries: Tensor, docs: Tensor) -> Tensor:
    """``[B, D]`` cosine similarities between query and document embeddings."""
    q = nn.functional.normalize(queries, p=2, dim=-1)
    d = nn.functional.normalize(docs, p=2, dim=-1)
    return q @ d.T


def multi_positive_supcon(cos: Tensor, positive: Tensor, temperature: float) -> Tensor:
    """SupCon ``L_out`` from a ``[B, D]`` cosine matrix and a ``[B, D]`` boolean positive mask."""
    logits = cos / temperature
    log_prob = logits - torch.logsumexp(logits, dim=1, keepdim=True)
    pos = positive.to(log_prob.dtype)
    per_query = -(log_prob * pos).sum(dim=1) / pos.sum(dim=1)
    return per_query.mean()


class MultiPositiveSupConLoss(nn.Module):
    """Supervised contrastive loss with every in-batch gold document as a positive.

    Args:
        model: the SentenceTransformer being trained (queries and documents share it).
        relations: turns the batch's label tensor into :class:`BatchRelations`, typically a
            :class:`~logic_rag.finetune.losses.relations.GoldSetRelations`. Without one, each
            query's only positive is its own document (in-batch InfoNCE).
        temperature: softmax temperature ``tau`` (0.05 = sentence-transformers' scale 20).
        gather_across_devices: under DDP (``torchrun`` / ``accelerate launch``, world size > 1)
            all-gather the embeddings and labels of every rank so that each query is contrasted
            with the documents of the global batch; every rank then returns the loss of the
            global batch (see :mod:`logic_rag.finetune.losses.distributed` for why this gives
            the single-process gradient). No effect without an initialised process group.
        frozen_documents: train the query side only: every document column is embedded by a
            frozen copy of ``model`` taken now (under ``no_grad``, in eval mode), so an index
            built with the base model keeps serving the tuned query encoder. This is the
            affordable way to tune a large encoder (EmbeddingGemma) on CPU: documents cost a
            forward pass, and re-encoding the corpus after training is not needed.

    Inputs: ``(query, positive)`` pairs, optionally followed by hard-negative columns, which are
    negatives for every query. Labels: ``[query_id, positive_doc_id, group_id]`` per row when a
    relation provider is given (see :mod:`logic_rag.finetune.losses.relations`).
    """

    def __init__(
        self,
        model: Any,
        relations: RelationProvider | None = None,
        temperature: float = 0.05,
        gather_across_devices: bool = False,
        frozen_documents: bool = False,
    ) -> None:
        super().__init__()
        if temperature <= 0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        self.model = model
        self.temperature = float(temperature)
        self.relations = relations
        self.gather_across_devices = bool(gather_across_devices)
        self.frozen_documents = bool(frozen_documents)
        self.document_model: Any = None
        if self.frozen_documents:
            # Taken before any step (and before a resumed checkpoint is loaded into ``model``).
            doc_model = copy.deepcopy(model)
            doc_model.requires_grad_(False)
            doc_model.eval()
            # Kept out of ``nn.Module`` registration: it must not be saved, moved to another
            # dtype by the trainer or handed to the optimiser.
            object.__setattr__(self, "document_model", doc_model)

    def train(self, mode: bool = True) -> MultiPositiveSupConLoss:
        """Switch the trained side; a frozen document encoder always stays in eval mode."""
        super().train(mode)
        if self.document_model is not None:
            self.document_model.eval()
        return self

    def embed(self, sentence_features: Iterable[dict[str, Tensor]]) -> list[Tensor]:
        features = list(sentence_features)
        if self.document_model is None:
            return [self.model(f)["sentence_embedding"] for f in features]
        out = [self.model(features[0])["sentence_embedding"]] if features else []
        with torch.no_grad():
            out += [self.document_model(f)["sentence_embedding"] for f in features[1:]]
        return out

    def batch_relations(
        self, labels: Any, num_queries: int, num_docs: int, device: Any
    ) -> BatchRelations:
        return resolve_relations(labels, self.relations, num_queries, num_docs, device)

    def gather(self, queries: Tensor, docs: Tensor, labels: Any) -> tuple[Tensor, Tensor, Any]:
        """The global batch under DDP with ``gather_across_devices``, else the local one."""
        if self.gather_across_devices and distributed_world_size() > 1:
            return gather_in_batch(queries, docs, labels)
        return queries, docs, labels

    def compute_loss_from_embeddings(self, queries: Tensor, docs: Tensor, labels: Any) -> Tensor:
        queries, docs, labels = self.gather(queries, docs, labels)
        rel = self.batch_relations(labels, queries.shape[0], docs.shape[0], queries.device)
        return multi_positive_supcon(cosine_scores(queries, docs), rel.positive, self.temperature)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Any = None) -> Tensor:
        embeddings = self.embed(sentence_features)
        if len(embeddings) < 2:
            raise ValueError(
                f"expected (query, positive[, negatives...]) columns, got {len(embeddings)}"
            )
        return self.compute_loss_from_embeddings(embeddings[0], torch.cat(embeddings[1:]), labels)

    def get_config_dict(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "relations": repr(self.relations),
            "gather_across_devices": self.gather_across_devices,
            "frozen_documents": self.frozen_documents,
        }

    @property
    def citation(self) -> str:
        return SUPCON_CITATION
