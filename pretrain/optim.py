"""timm's LAMB and LARS in the vitbench optimizer registry: ``optimizer=dict(type='Lamb', lr=3e-3)``.

DeiT III trains with Apex's fused LAMB, which clips the global gradient norm to 1.0 inside the step;
timm's ``Lamb`` does the same (``max_grad_norm=1.0`` by default). LARS is MAE's linear-probe optimizer.
"""
from timm.optim import Lamb, Lars

from vitbench.registry import OPTIMIZERS

OPTIMIZERS.register_module(name='Lamb', module=Lamb)
OPTIMIZERS.register_module(name='Lars', module=Lars)
