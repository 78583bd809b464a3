"""The one backbone config dialect: ``dict(type=<the family's registered type>, arch=<named variant>, **overrides)``,
in every config, whatever builds it.

    backbone=dict(type='vitbench.VisionTransformer', arch='deit3_small_patch16_224', drop_path_rate=0.1)

The type is the family's registered (dense) type, its record's ``dense_type`` (backbones/family.py), with or
without the ``vitbench.`` scope: ``vitbench.VisionTransformer``, ``vitbench.CaiT``, ``vitbench.ResMLP``,
``vitbench.PatchConvNet``, ``vitbench.TimmBackbone`` for ``timm:NAME``. mmseg / mmdet build that type from the
registry (the dense backbone); the suite's recipes (classifier, MAE, distilled MAE, MoCo-v3:
``pretrain/classifier.py`` ``build_backbone``) build the family's classifier model of ``arch``, the type only
naming the family: there it may be left out (it follows from ``arch``), and a type of another family than
``arch``'s is refused. A swap (``downstream/backbone_swap.py``) always writes it.
"""
from typing import Optional

from .factory import family_record
from .family import FAMILIES

SCOPE = 'vitbench.'


def backbone_type(arch: str, like: Optional[str] = None) -> str:
    """The type a backbone config of variant ``arch`` names: its family's registered type, scoped
    ``vitbench.`` unless ``like`` (the type it replaces) is written without a scope."""
    scope = '' if like and not like.startswith(SCOPE) else SCOPE
    return scope + family_record(arch).dense_type


def check_backbone_type(type_: Optional[str], arch: str, key: str = 'model.backbone.type') -> None:
    """Refuse, in one line naming ``key``, a ``type_`` that is not the registered type of ``arch``'s family (None:
    no type given, nothing to check)."""
    record = family_record(arch)  # an unknown arch: a KeyError listing the close names
    if type_ is None or type_ in (record.dense_type, SCOPE + record.dense_type):
        return
    bare = type_[len(SCOPE):] if type_.startswith(SCOPE) else type_
    named = next((f for f in FAMILIES.values() if f.dense_type == bare), None)
    what = f'arch {arch!r} is not a {named.title} variant' if named else 'no backbone family is registered as it'
    raise ValueError(f"{key}={type_!r}: {what}; expected {SCOPE + record.dense_type!r} ({record.title}'s type)")
