"""Frozen teachers for distillation (DeiT's classifier teacher, distilled MAE's encoder teacher).

A teacher is described in the config and built here:

    dict(checkpoint='work_dirs/mae_vit_base/backbone.pth')            # vitbench file: arch + overrides inside
    dict(arch='deit3_base_patch16_224', checkpoint='deit_3_base.pth')  # any format backbones can load
    dict(type='vitbench.VisionTransformer', arch='deit3_base_patch16_224', checkpoint=...)  # the backbone dialect
    dict(type='vitbench.TimmBackbone', arch='timm:regnety_160', checkpoint='regnety_160-a5fe301d.pth')  # timm's
    dict(source='timm', name='regnety_160', checkpoint=...)  # the older spelling of the line above, still read

A timm teacher (the convnets of thesis Table 3.2: RegNetY-4/8/12/16GF) is timm's own model built by timm and
loaded from the file the config names (a timm state dict, or the official DeiT teacher file, whose weights sit
under 'model'); its classifier must have the student's classes, else timm would drop it and the teacher would
teach from a random head: that is refused in one line.

It is frozen and always in eval mode, and it is *not* a sub-module of the student's model: its weights come
from their own file, so they stay out of every training checkpoint, the optimizer and DDP.
:class:`TeacherMixin` moves it along with the model (``.to(device)``, ``.half()``...).
"""
import os.path as osp
from typing import Optional

from torch import nn

from backbones import create_model
from backbones.backbone_type import check_backbone_type
from backbones.checkpoint import FORMAT_TAG, read_checkpoint
from backbones.timm_backbones import PREFIX, classes_in, is_timm_name, timm_model_name
from vitbench.compat.torch import AppliesToDetached


def _vitbench_file_arch(path: str):
    obj = read_checkpoint(path)
    if isinstance(obj, dict) and FORMAT_TAG in obj:
        return obj.get('arch'), dict(obj.get('overrides') or {})
    return None, {}


def build_teacher(cfg: dict, num_classes: Optional[int] = 0) -> nn.Module:
    """A frozen, eval-mode teacher from ``cfg`` (see the module docstring).

    ``num_classes``: classes of the teacher's head (0: no head, for feature / attention teachers).
    """
    cfg = dict(cfg)
    source = cfg.pop('source', 'vitbench')
    if source == 'timm':  # the older spelling: dict(source='timm', name=NAME) is arch='timm:NAME'
        name = cfg.pop('name', None)
        if name is None:
            raise ValueError("a timm teacher needs 'name' (a timm model name, e.g. 'regnety_160'); or write "
                             "dict(type='vitbench.TimmBackbone', arch='timm:regnety_160', checkpoint=PATH)")
        cfg['arch'] = PREFIX + name
    elif source != 'vitbench':
        raise ValueError(f"teacher source must be 'vitbench' or 'timm', got {source!r}")
    checkpoint = cfg.pop('checkpoint', None)
    if not checkpoint:
        raise ValueError(f"teacher {cfg}: needs a 'checkpoint' (a teacher with random weights teaches nothing)")
    if not osp.isfile(checkpoint):
        raise FileNotFoundError(f"teacher checkpoint '{checkpoint}' not found: train or download the teacher "
                                f"first, and point model.distillation.teacher.checkpoint (tools/train.py "
                                f"--teacher PATH) at the file")
    arch = cfg.pop('arch', None)
    overrides = {}
    if arch is None or not is_timm_name(arch):  # a vitbench file names its variant and overrides
        file_arch, overrides = _vitbench_file_arch(checkpoint)
        arch = arch or file_arch
    if arch is None:
        raise ValueError(f"teacher checkpoint '{checkpoint}' does not name its architecture: give 'arch' "
                         '(a named variant, or timm:NAME) in the teacher config')
    # the suite's one backbone dialect (backbones/backbone_type.py): a type, if given, is arch's family's
    check_backbone_type(cfg.pop('type', None), arch, key='model.teacher.type')
    if is_timm_name(arch) and num_classes:
        classes = classes_in(checkpoint, timm_model_name(arch))
        if classes != num_classes:
            raise ValueError(f"teacher checkpoint '{checkpoint}': its classifier has {classes} classes (0: none "
                             f"found), the student {num_classes}; {arch} would teach from a freshly drawn head")
    model = create_model(arch, num_classes=num_classes, checkpoint=checkpoint, **dict(overrides, **cfg))
    return freeze(model)


def freeze(model: nn.Module) -> nn.Module:
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model  # outside the module tree, the student's train() never switches it back


class TeacherMixin(AppliesToDetached):
    """Holds a teacher outside the module tree (``self.teacher``) and moves it with the model."""

    def set_teacher(self, teacher: nn.Module) -> None:
        object.__setattr__(self, '_teacher', teacher)  # bypasses nn.Module registration on purpose

    @property
    def teacher(self) -> Optional[nn.Module]:
        return self.__dict__.get('_teacher')

    def detached_modules(self):
        return () if self.teacher is None else (self.teacher,)
