"""vitbench backbones: the ViT family (DeiT, DeiT III, parallel ViT, hMLP stem, MAE-lite ViT-Tiny), CaiT,
ResMLP and PatchConvNet.

    from backbones import create_model, list_models
    model = create_model('deit3_base_patch16_224', checkpoint='deit_3_base_224_1k.pth')

Importing the package registers ``vitbench.VisionTransformer``, ``vitbench.CaiT``, ``vitbench.ResMLP``,
``vitbench.PatchConvNet`` and ``vitbench.TimmBackbone`` (any timm model: ``timm:NAME``) for mmseg / mmdet, and
each family's record (``backbones/family.py``): it imports every module of the package, so that a family's model
file registers itself, listed nowhere (a new family: docs/extending-backbone.md).
"""
from .cait import CaiT
from .checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from .dense import CaiTBackbone, PatchConvNetBackbone, ResMLPBackbone, ViTBackbone
from .factory import create_model, family_of, family_record, get_variant, list_models, suite_variant_of
from .family import FAMILIES, Family, discover_families, get_family, register_family
from .patchconvnet import PatchConvNet
from .resmlp import ResMLP
from .timm_backbones import TimmBackbone
from .vit import VisionTransformer

__all__ = ['create_model', 'list_models', 'get_variant', 'family_of', 'family_record', 'Family', 'FAMILIES',
           'get_family', 'register_family', 'TimmBackbone', 'load_checkpoint', 'save_checkpoint',
           'CheckpointError', 'VisionTransformer', 'CaiT', 'ResMLP', 'PatchConvNet', 'ViTBackbone',
           'CaiTBackbone', 'ResMLPBackbone', 'PatchConvNetBackbone', 'suite_variant_of']

discover_families(__name__, __path__)  # the family modules no line above names (docs/extending-backbone.md)
