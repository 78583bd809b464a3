"""The models an analysis compares: ``LABEL=PATH[@ARCH]`` on the command line → a backbone in eval mode.

PATH is any checkpoint the loader reads (``backbones/checkpoint/``): a vitbench ``backbone.pth`` names its
variant and constructor overrides itself; official, timm and mmengine files do not, so their variant is given
after ``@`` (``deit=deit_tiny_patch16_224-a1311bcf.pth@deit_tiny_patch16_224``), except a run's epoch checkpoint
(``RUN/epoch_100.pth``), built as the run's ``backbone.pth`` beside it records (its overrides included).
``random@ARCH`` is the variant freshly initialised (seeded): the untrained reference. A run folder stands for its ``backbone.pth``, or
for that of its first seed (``seed<k>/backbone.pth``, lowest k) when the run was seeded.
"""
import glob
import os.path as osp
import re
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
from torch import nn

from backbones import create_model, get_variant
from backbones.timm_backbones import is_timm_name
from backbones.checkpoint import FORMAT_TAG, read_checkpoint

RANDOM = 'random'


@dataclass
class AnalysisModel:
    label: str
    source: str  # checkpoint path, or 'random'
    arch: str
    model: nn.Module

    @property
    def patch_size(self) -> int:
        return int(self.model.patch_embed.patch_size[0])


def parse_model_spec(text: str) -> Tuple[str, str, Optional[str]]:
    """'LABEL=PATH[@ARCH]' → (label, path, arch or None); one clear line when it is not of that form."""
    label, sep, rest = text.partition('=')
    path, _, arch = rest.rpartition('@') if '@' in rest else (rest, '', '')
    if not sep or not label or not path or (('@' in rest) and not arch):
        raise ValueError(f"--models: {text!r} is not LABEL=PATH or LABEL=PATH@ARCH (e.g. "
                         "mae=work_dirs/demo/vit_demo_patch8_64/mae/backbone.pth, or scratch=random@vit_demo_patch8_64)")
    return label, path, arch or None


def resolve_run_folder(label: str, path: str) -> str:
    """A run folder → its backbone.pth (or its first seed's); a file stays itself."""
    if not osp.isdir(path):
        return path
    own = osp.join(path, 'backbone.pth')
    if osp.isfile(own):
        return own
    seeded = sorted(glob.glob(osp.join(path, 'seed*', 'backbone.pth')),
                    key=lambda p: int(re.sub(r'\D', '', osp.basename(osp.dirname(p))) or 0))
    if not seeded:
        raise FileNotFoundError(f'--models {label}: the folder {path!r} holds no backbone.pth (nor seed*/backbone.pth); '
                                'is its run finished?')
    return seeded[0]


def _run_export(path: str) -> Tuple[Optional[str], dict]:
    """The variant and constructor overrides that the ``backbone.pth`` beside ``path``, a runner checkpoint,
    records (a run folder's export, next to its ``epoch_N.pth``); (None, {}) where there is none. The epoch files of a run made with
    ``--cfg-options model.backbone.depth=36`` then build with 36 blocks (CaiT Figure 4 shades its curves by epoch)."""
    beside = osp.join(osp.dirname(osp.abspath(path)), 'backbone.pth')
    if osp.abspath(path) == beside or not osp.isfile(beside):
        return None, {}
    content = read_checkpoint(beside)
    if not (isinstance(content, dict) and FORMAT_TAG in content and content.get('arch')):
        return None, {}
    return content['arch'], dict(content.get('overrides') or {})


def load_model(label: str, path: str, arch: Optional[str] = None, seed: int = 0) -> AnalysisModel:
    """Build the backbone (no classifier head) and load ``path`` strictly; ``random`` keeps the seeded init."""
    overrides = {}
    if path == RANDOM:
        if arch is None:
            raise ValueError(f'--models {label}=random needs the variant: {label}=random@ARCH')
    else:
        path = resolve_run_folder(label, path)
        if not osp.isfile(path):
            raise FileNotFoundError(f'--models {label}: checkpoint {path!r} not found')
        content = read_checkpoint(path)
        if isinstance(content, dict) and FORMAT_TAG in content:  # vitbench backbone.pth
            arch = arch or content.get('arch')
            overrides = dict(content.get('overrides') or {})
        elif arch is None and isinstance(content, dict) and {'meta', 'state_dict'} <= set(content):
            arch, overrides = _run_export(path)  # a run's epoch checkpoint (mmengine's): its backbone.pth says
        if arch is None:
            raise ValueError(f'--models {label}: {path} does not record its backbone variant; name it as '
                             f'{label}={path}@ARCH (tools/list_backbones.py lists the variants)')
    if is_timm_name(arch):  # the analyses read the suite's token / attention internals
        raise ValueError(f'--models {label}: {arch} is a timm model; the analyses (attention maps, tokens, CKA of '
                         'blocks) run on the suite\'s own backbones (tools/list_backbones.py lists them)')
    get_variant(arch)  # unknown names: the closest valid ones
    for key in ('drop_path_rate', 'drop_rate', 'attn_drop_rate', 'proj_drop_rate'):
        overrides.pop(key, None)  # training-only; eval mode ignores them anyway
    torch.manual_seed(seed)
    model = create_model(arch, num_classes=0, checkpoint=None if path == RANDOM else path, **overrides)
    return AnalysisModel(label, path, arch, model.eval())
