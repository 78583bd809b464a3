"""The small MoCo-v3 case that tests/test_pretrain_mocov3.py computes in one process and
tests/_mocov3_dist_worker.py on two ranks: the same seeded model, batch, queries and keys in both."""
import torch

import pretrain  # noqa: F401
from pretrain.mocov3 import MoCoV3

GLOBAL_BATCH = 8
IMG = 32


def build_model() -> MoCoV3:
    torch.manual_seed(0)
    return MoCoV3(dict(arch='vit_demo_patch8_64', img_size=IMG, depth=2), dim=16, mlp_dim=32)


def global_batch() -> torch.Tensor:
    """(8, 2 views, 3, 32, 32), already normalised."""
    return torch.randn(GLOBAL_BATCH, 2, 3, IMG, IMG, generator=torch.Generator().manual_seed(1))


def query_key_case():
    g = torch.Generator().manual_seed(2)
    return torch.randn(GLOBAL_BATCH, 5, generator=g), torch.randn(GLOBAL_BATCH, 5, generator=g)
