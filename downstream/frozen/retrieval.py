"""Category-level retrieval (Touvron thesis §2.3.2): each query ranks a collection by cosine similarity, and a
result is relevant when it has the query's class. The score of a query is its average precision (the mean, over
the relevant items, of the precision at their rank: what ``sklearn.metrics.average_precision_score`` computes for
untied scores), the score of the test set their mean, mAP.

Two protocols: test images as queries against the training collection (the thesis', as the memory of training
embeddings is the database), or each image of one set against the rest of it (``query_is_collection``).
"""
import torch
import torch.nn.functional as F


@torch.no_grad()
def average_precisions(collection: torch.Tensor, collection_labels: torch.Tensor, queries: torch.Tensor,
                       query_labels: torch.Tensor, query_is_collection: bool = False,
                       chunk: int = 512) -> torch.Tensor:
    """The average precision of each query, in [0, 1]; a query with no relevant item scores 0.
    ``query_is_collection``: the queries are the collection itself, and each query's own entry is left out."""
    database = F.normalize(collection.float(), dim=1)
    labels = collection_labels.long()
    aps = []
    for start in range(0, len(queries), chunk):
        query = F.normalize(queries[start:start + chunk].float(), dim=1)
        similarity = query @ database.T
        relevant = (labels[None, :] == query_labels[start:start + chunk].long()[:, None]).double()
        if query_is_collection:
            rows = torch.arange(len(query))
            similarity[rows, rows + start] = -float('inf')  # sorted last, and not counted below
            relevant[rows, rows + start] = 0.0
        order = similarity.argsort(dim=1, descending=True, stable=True)
        hits = relevant.gather(1, order)
        precision_at = hits.cumsum(1) / torch.arange(1, hits.shape[1] + 1, dtype=torch.float64)
        total = hits.sum(1)
        aps.append(torch.where(total > 0, (precision_at * hits).sum(1) / total.clamp(min=1), torch.zeros_like(total)))
    return torch.cat(aps)
