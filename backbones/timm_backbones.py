"""Backbones the suite did not write: any timm model, named ``timm:NAME`` wherever a variant name goes.

    create_model('timm:convnext_tiny', num_classes=102)                      # a classifier (transfer, fine-tuning)
    dict(type='vitbench.TimmBackbone', arch='timm:convnext_tiny', out_indices=[0, 1, 2, 3])   # mmseg / mmdet
    tools/train.py configs/upernet_deit3_b.py --backbone timm:swin_tiny_patch4_window7_224

The model is timm's own (``timm.create_model``), so its outputs are timm's. Dense tasks read its maps through
timm's ``forward_intermediates`` (NCHW, one per index of ``feature_info``), which every timm family has; any
``nn.Module`` with ``forward_intermediates`` and ``feature_info`` can be given to :class:`TimmBackbone` as
``model``. :func:`describe` tells the task adapters what they need: a *plain* model (one stride, a ViT: the
suite's simple pyramids rescale its maps) or a *hierarchical* one (the stages of strides 4 to 32 go straight to
UperNet, or to an FPN for Mask R-CNN).

Weights, never downloaded here:

* ``pretrained=True``: timm's weights from the local Hugging Face cache (the hub is offline for the lookup); if
  they are not there, one line says which repository is missing and how to get it;
* ``checkpoint=FILE`` (or ``init_cfg=dict(type='Pretrained', checkpoint=FILE)``, which ``--checkpoint`` sets):
  a local file in timm's format (``.pth``, ``.safetensors``, or a ``backbone.pth`` the suite exported), loaded by
  timm's own ``load_pretrained``: the model's checkpoint filter (position embeddings resized to ``img_size``) and
  a classifier of another size dropped.

The weights are loaded when the model is built; ``is_init`` keeps mmengine's ``init_weights`` from drawing
timm's initialisation again over them.
"""
import difflib
import functools
import inspect
import os
from contextlib import contextmanager
from typing import List, Optional, Sequence, Tuple, Union

import torch
from mmengine.model import BaseModule
from torch import nn

from vitbench.engine.layer_decay import timm_layers
from vitbench.registry import MODELS

from .family import Family, register_family

PREFIX = 'timm:'
PYRAMID_STRIDES = (4, 8, 16, 32)  # the strides UperNet's four levels and Mask R-CNN's RoI extractors expect


def is_timm_name(name) -> bool:
    return isinstance(name, str) and name.startswith(PREFIX)


def timm_model_name(name: str) -> str:
    """'timm:convnext_tiny' -> 'convnext_tiny' (a pretrained tag, '.fb_in22k', may follow); unknown names raise a
    KeyError naming the closest timm models."""
    import timm
    bare = name[len(PREFIX):] if is_timm_name(name) else name
    if not timm.is_model(bare.split('.')[0]):
        close = difflib.get_close_matches(bare, timm.list_models(), n=5, cutoff=0.6)
        hint = f"; did you mean {', '.join(PREFIX + c for c in close)}?" if close else ''
        raise KeyError(f"unknown timm model {name!r}{hint} (timm.list_models() lists them)")
    return bare


@contextmanager
def _offline_hub():
    """Hugging Face lookups answered from the local cache only: nothing downloads, here or in tests. The hub reads
    HF_HUB_OFFLINE from the environment once, at import, so its constant is set for the lookup and put back."""
    try:
        import huggingface_hub.constants as hub
    except ImportError:  # timm without the hub: it cannot download either
        yield
        return
    was, hub.HF_HUB_OFFLINE = hub.HF_HUB_OFFLINE, True
    try:
        yield
    finally:
        hub.HF_HUB_OFFLINE = was


@functools.lru_cache(maxsize=None)
def model_class(bare: str) -> type:
    """The class timm builds for ``bare``, found by building it on the meta device (no memory, no weights)."""
    import timm
    with torch.device('meta'):
        return type(timm.create_model(bare, pretrained=False))


def accepted_overrides(bare: str, overrides: dict) -> Tuple[dict, List[str]]:
    """(the overrides the model's constructor takes, the names it does not). A ``img_size`` given to a model that
    takes ``dynamic_img_size`` (timm's ViTs) also turns that on: test images of other sizes then work, as with
    the suite's own ViTs."""
    params = inspect.signature(model_class(bare).__init__).parameters
    kwargs = {k: v for k, v in overrides.items() if v is not None and k in params}
    dropped = sorted(k for k, v in overrides.items() if v is not None and k not in kwargs)
    if 'img_size' in kwargs and 'dynamic_img_size' in params and 'dynamic_img_size' not in overrides:
        kwargs['dynamic_img_size'] = True
    return kwargs, dropped


def _checkpoint_of(checkpoint: Optional[str], init_cfg) -> Optional[str]:
    if isinstance(init_cfg, dict) and init_cfg.get('type') == 'Pretrained':
        checkpoint = checkpoint or init_cfg.get('checkpoint')
    elif init_cfg is not None:
        raise ValueError(f"timm models take their weights from pretrained=True or a checkpoint file; init_cfg "
                         f"{init_cfg!r} is not dict(type='Pretrained', checkpoint=FILE)")
    if checkpoint is not None and not os.path.isfile(checkpoint):
        raise FileNotFoundError(f"checkpoint '{checkpoint}' not found")
    return checkpoint


def create_timm_model(name: str, num_classes: int = 1000, pretrained: bool = False, checkpoint: Optional[str] = None,
                      init_cfg=None, **overrides) -> nn.Module:
    """timm's model ``name`` ('timm:NAME'), with its weights (module docstring). ``overrides`` (img_size,
    drop_path_rate, global_pool, ...) go to its constructor where it takes them; the others are ignored with a
    note (a ConvNeXt has no img_size: it takes any size)."""
    import timm
    bare = timm_model_name(name)
    checkpoint = _checkpoint_of(checkpoint, init_cfg)
    kwargs, dropped = accepted_overrides(bare, overrides)
    if dropped:
        from mmengine.logging import print_log
        print_log(f'{name}: ignoring {dropped}, which its constructor ({model_class(bare).__name__}) does not take',
                  logger='current')
    weights = {}
    if checkpoint is not None:  # timm keeps the file's classifier when it has the model's number of classes
        weights = dict(pretrained=True, pretrained_cfg_overlay=dict(
            file=os.path.abspath(checkpoint), num_classes=classes_in(checkpoint, bare)))
    elif pretrained:
        weights = dict(pretrained=True)
    with _offline_hub():
        try:
            model = timm.create_model(bare, num_classes=num_classes, **weights, **kwargs)
        except Exception as e:  # noqa: BLE001 - the hub's several "not cached" errors, told in one line
            if checkpoint is None and pretrained and _is_not_cached(e):
                cfg = timm.models.get_pretrained_cfg(bare)
                repo = (cfg.hf_hub_id if cfg is not None else None) or bare
                raise FileNotFoundError(
                    f"{name}: pretrained=True, and the weights (Hugging Face repository {repo!r}) are not in the "
                    f"local cache ({_hub_cache()}); nothing is downloaded here: on a machine with internet run "
                    f"`python -c \"import timm; timm.create_model('{bare}', pretrained=True)\"` and copy that "
                    f"cache over, or pass --checkpoint FILE") from None
            raise
    model.arch = name if is_timm_name(name) else PREFIX + name
    model.is_init = True  # built with its weights: mmengine's init_weights must not draw timm's init over them
    return model


def classes_in(path: str, bare: str) -> int:
    """Rows of the classifier in the weights file (0 without one), read from its header or memory-mapped: timm's
    loader keeps a classifier only when the model has as many classes as the weights say they have."""
    import timm
    cfg = timm.models.get_pretrained_cfg(bare)
    classifier = cfg.classifier if cfg is not None else 'head'
    names = (classifier,) if isinstance(classifier, str) else tuple(classifier or ())
    keys = [f'{name}.weight' for name in names]
    if path.endswith('.safetensors'):
        from safetensors import safe_open
        with safe_open(path, framework='pt') as f:
            return next((f.get_slice(k).get_shape()[0] for k in keys if k in f.keys()), 0)
    try:
        state = torch.load(path, map_location='cpu', mmap=True, weights_only=True)
    except Exception:  # noqa: BLE001 - not a plain state dict: timm's loader reads it, or says why it cannot
        return 0
    for wrapper in ('state_dict', 'model', 'state_dict_ema'):  # the layouts timm's load_state_dict unwraps
        if isinstance(state, dict) and isinstance(state.get(wrapper), dict):
            state = state[wrapper]
            break
    return next((state[k].shape[0] for k in keys if k in state), 0)


def _is_not_cached(error: Exception) -> bool:
    names = {type(e).__name__ for e in (error, error.__cause__, error.__context__) if e is not None}
    return bool(names & {'LocalEntryNotFoundError', 'OfflineModeIsEnabled', 'EntryNotFoundError'}) or \
        'offline' in str(error).lower() or 'cannot find the requested files' in str(error).lower()


def _hub_cache() -> str:
    try:
        from huggingface_hub.constants import HF_HUB_CACHE
        return HF_HUB_CACHE
    except ImportError:
        return 'no huggingface_hub installed'


def describe(name: str, **overrides) -> dict:
    """What the dense-task adapters need of timm model ``name``, from its ``feature_info`` (built on the meta
    device): ``kind`` 'plain' (one stride: ``embed_dim``, ``patch_size``, ``depth``) or 'hierarchical'
    (``indices``, ``channels`` of the levels at strides 4, 8, 16, 32)."""
    import timm
    bare = timm_model_name(name)
    kwargs, _ = accepted_overrides(bare, overrides)
    with torch.device('meta'):
        model = timm.create_model(bare, pretrained=False, num_classes=0, **kwargs)
    info = list(model.feature_info)
    strides = [f['reduction'] for f in info]
    if len(set(strides)) == 1:
        patch = getattr(getattr(model, 'patch_embed', None), 'patch_size', (strides[0],))
        return dict(kind='plain', embed_dim=info[-1]['num_chs'], patch_size=int(patch[0]), depth=len(info),
                    stride=strides[0])
    indices = [strides.index(s) for s in PYRAMID_STRIDES if s in strides]
    if len(indices) != len(PYRAMID_STRIDES):
        raise ValueError(f'{name}: its feature maps have strides {strides}; UperNet and Mask R-CNN read one map at '
                         f'each of the strides {PYRAMID_STRIDES}')
    return dict(kind='hierarchical', indices=indices, channels=[info[i]['num_chs'] for i in indices],
                strides=list(PYRAMID_STRIDES))


def default_resolution(model: nn.Module) -> Tuple[int, int]:
    """The input size a model is measured at: its patch embedding's grid (the suite's ViTs), else timm's
    ``pretrained_cfg['input_size']``."""
    patch_embed = getattr(model, 'patch_embed', None)
    if patch_embed is not None and getattr(patch_embed, 'img_size', None):
        return tuple(patch_embed.img_size)
    return tuple(getattr(model, 'pretrained_cfg', {}).get('input_size', (3, 224, 224))[1:])


@MODELS.register_module(name='TimmBackbone')
class TimmBackbone(BaseModule):
    """A timm model (``arch='timm:NAME'``) or any module with ``forward_intermediates`` / ``feature_info``
    (``model``: the module, or its config for the registry) as an OpenMMLab dense backbone.

    ``forward`` returns the NCHW maps of ``out_indices`` (indices into ``feature_info``; an index may repeat), in
    the order given. What comes after the last index (later blocks, the final norm, the classifier) is pruned, as
    timm's ``features_only`` does, so that no parameter goes unused (DistributedDataParallel). ``with_cp``: timm's
    gradient checkpointing. ``get_layer_id`` / ``num_layers`` follow timm's ``group_matcher`` (layer decay).
    """

    def __init__(self, arch: Optional[str] = None, model: Union[nn.Module, dict, None] = None,
                 out_indices: Union[int, Sequence[int]] = -1, img_size=None, drop_path_rate: Optional[float] = None,
                 with_cp: bool = False, pretrained: bool = False, init_cfg=None, **kwargs):
        super().__init__(init_cfg=None)  # the weights are loaded here, by timm's loader (module docstring)
        if (arch is None) == (model is None):
            raise ValueError("TimmBackbone takes arch='timm:NAME' or model=<module or config>, one of the two")
        if model is None:
            model = create_timm_model(arch, num_classes=0, pretrained=pretrained, init_cfg=init_cfg,
                                      img_size=img_size, drop_path_rate=drop_path_rate, **kwargs)
        elif isinstance(model, dict):
            model = MODELS.build(model)
        for needed in ('forward_intermediates', 'feature_info'):
            if not hasattr(model, needed):
                raise TypeError(f'{type(model).__name__} has no {needed}: TimmBackbone reads the maps through timm\'s '
                                'forward_intermediates(x, indices) and their strides from feature_info')
        levels = len(model.feature_info)
        order = [out_indices] if isinstance(out_indices, int) else list(out_indices)
        if not order or any(not -levels <= i < levels for i in order):
            raise ValueError(f'out_indices {out_indices}: {type(model).__name__} has {levels} feature levels '
                             f'(indices 0 to {levels - 1}, or negative from the end)')
        self.out_indices = [i % levels for i in order]
        self.indices = sorted(set(self.out_indices))
        if hasattr(model, 'prune_intermediate_layers'):
            model.prune_intermediate_layers(self.indices, prune_norm=True, prune_head=True)
        if with_cp:
            model.set_grad_checkpointing(True)
        self.arch = arch
        self.model = model

    def init_weights(self):
        """Nothing: the weights were loaded when the model was built."""

    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, ...]:
        maps = self.model.forward_intermediates(x, indices=self.indices, intermediates_only=True)
        by_index = dict(zip(self.indices, maps))
        return tuple(by_index[i] for i in self.out_indices)

    def no_weight_decay(self) -> set:
        return {f'model.{name}' for name in getattr(self.model, 'no_weight_decay', set)()}

    @property
    def num_layers(self) -> int:
        return self._layers()[1] - 1

    def get_layer_id(self, name: str) -> int:
        return self._layers()[0](name[len('model.'):] if name.startswith('model.') else name)

    def _layers(self):
        if not hasattr(self, '_layer_map'):  # timm's grouping, once: it matches every parameter name
            self._layer_map = timm_layers(self.model)
        return self._layer_map


def _layout(name: str, backbone: dict) -> dict:
    return describe(name, img_size=backbone.get('img_size'))


# the family's record (backbones/family.py): the task adapters read describe(); a swap drops the suite's ViT
# options a timm model does not share (a Swin's own window_size is another thing), and the config's checkpoint
# (the suite's weights of another backbone: a timm model takes timm's, from --checkpoint or pretrained=True)
register_family(Family(name='timm', title='timm', model_class=None, dense_type='TimmBackbone', describe_maps=_layout,
                       swap_drops=('window_size', 'global_attn_indexes', 'use_rel_pos', 'final_norm',
                                   'rel_pos_zero_init'), swap_drops_checkpoint=True))
