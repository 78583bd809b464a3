"""The small DINO case that tests/test_pretrain_dino.py runs in one process and tests/_dino_dist_worker.py on two
ranks: the same seeded model (no drop path: the student is deterministic), the same multi-crop batch (2 global
crops of 32 px and 2 local crops of 16 px per image, uint8 as the loader gives them) and the same optimiser."""
import torch
from mmengine.optim import OptimWrapper

import pretrain  # noqa: F401
from pretrain.dino import DINO
from pretrain.preprocessor import ClsDataPreprocessor

GLOBAL_BATCH = 8
LR = 0.1


def build_model() -> DINO:
    torch.manual_seed(0)
    model = DINO(dict(arch='vit_demo_patch8_64', depth=2, img_size=32, drop_path_rate=0.), out_dim=64,
                 hidden_dim=32, bottleneck_dim=16, clip_grad=3.0, freeze_last_layer=0)
    model.data_preprocessor = ClsDataPreprocessor()
    model.momentum, model.teacher_temp_now = 0.9, 0.04  # a teacher update that moves it
    model.center.normal_(0, 0.1, generator=torch.Generator().manual_seed(3))  # a centre the loss subtracts
    return model


def build_optim_wrapper(model: DINO) -> OptimWrapper:
    """SGD: the step is lr x the (clipped, rank-averaged) gradient, so parameters compare within rounding (Adam's
    first step is the gradient's sign, which rounding can flip where a gradient is ~0)."""
    return OptimWrapper(torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=LR))


def global_batch():
    """[(8, 2, 3, 32, 32), (8, 2, 3, 16, 16)] uint8: the global and the local crops of 8 images."""
    g = torch.Generator().manual_seed(1)
    return [torch.randint(0, 256, (GLOBAL_BATCH, 2, 3, 32, 32), dtype=torch.uint8, generator=g),
            torch.randint(0, 256, (GLOBAL_BATCH, 2, 3, 16, 16), dtype=torch.uint8, generator=g)]
