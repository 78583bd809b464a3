"""The weighted cosine k-NN classifier of DINO's ``eval_knn.py`` (Caron et al. 2021), which Grafit's Eq. 2.6 also
uses (Touvron thesis §2.3.3, after Wu et al. 2018): features are L2-normalised, the ``k`` training features most
cosine-similar to a test feature vote for their labels, each with weight ``exp(cos / T)``, and the class with the
largest summed weight is the prediction. DINO's defaults: k = 20, T = 0.07.
"""
import torch
import torch.nn.functional as F


@torch.no_grad()
def knn_scores(train_features: torch.Tensor, train_labels: torch.Tensor, test_features: torch.Tensor, k: int = 20,
               temperature: float = 0.07, num_classes: int = None, chunk: int = 1024) -> torch.Tensor:
    """(test images, classes) summed vote weights; ``argmax(1)`` is the prediction."""
    if k < 1 or temperature <= 0:
        raise ValueError(f'k-NN: k must be >= 1 and the temperature > 0, got k={k}, temperature={temperature}')
    train = F.normalize(train_features.float(), dim=1)
    labels = train_labels.long()
    num_classes = int(labels.max()) + 1 if num_classes is None else num_classes
    k = min(k, len(train))
    scores = []
    for start in range(0, len(test_features), chunk):  # (chunk, train) similarities at a time, as DINO's
        query = F.normalize(test_features[start:start + chunk].float(), dim=1)
        similarity, index = (query @ train.T).topk(k, dim=1)
        weights = (similarity / temperature).exp()
        votes = torch.zeros(len(query), num_classes, dtype=weights.dtype)
        scores.append(votes.scatter_add_(1, labels[index], weights))
    return torch.cat(scores)


def knn_predict(train_features, train_labels, test_features, k: int = 20, temperature: float = 0.07,
                num_classes: int = None) -> torch.Tensor:
    """The predicted label of each test feature."""
    return knn_scores(train_features, train_labels, test_features, k, temperature, num_classes).argmax(1)
