"""A backbone family as one record, registered next to its model: what every other part of the suite needs to
know of it (docs/extending-backbone.md walks through adding one).

    register_family(Family(name='resmlp', title='ResMLP', model_class=ResMLP, dense_type='ResMLP',
                           fixed_grid=True, checkpoint_formats=(RESMLP_TIMM, RESMLP_OFFICIAL)))

The consumers ask the record, never a table of their own: ``backbones/factory.py`` (the class a variant builds),
``backbones/dense.py`` (its name in errors), ``downstream/backbone_swap.py`` (the registered dense type a swap
writes, the config keys it drops), ``downstream/seg/swap.py`` (how UperNet reads the maps),
``downstream/det/swap.py`` (windowed attention, fixed grid), ``backbones/checkpoint/formats.py`` (the family's
own checkpoint key names), ``downstream/backbone_swap.py`` again (``Family.layout``: what the task adapters read
of a variant). What the model class itself provides is the family contract, backbones/contract.py, which
``register_family`` checks (with each variant's layout). A family module inside the suite is found by
:func:`discover_families`: no list of families to edit.
"""
import importlib
import pkgutil
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, Optional, Tuple

from .contract import LAYOUT, contract_gaps, layout_gaps, layout_of
from .variants import VARIANTS

# how UperNet takes the maps (downstream/seg/swap.py): the blocks of its four levels ...
UPERNET_LEVELS = ('pyramid', 'trunk_output')  # four blocks spread over the depth | the last block at every level
# ... and the decoder's width from the backbone's: DeiT III's rule, or 512 from width 384 up (PatchConvNet)
UPERNET_WIDTHS = ('by_width', '512_from_small')


@dataclass(frozen=True)
class CheckpointFormat:
    """A checkpoint format only this family's files have: recognised from the keys (``detect(state_dict)``),
    renamed to the suite's keys (``convert(state_dict)``); ``source`` is what the loader reports."""
    source: str
    detect: Callable[[dict], bool]
    convert: Callable[[dict], dict]


@dataclass(frozen=True)
class Family:
    """One backbone family.

    Args:
        name: the variant table's ``model`` ('vit', 'cait', ...), what ``backbones.family_of`` returns.
        title: the family in messages ('ViT').
        model_class: the classifier class a variant's kwargs build (None for timm: timm builds it).
        dense_type: the name its dense backbone is registered under in the ``vitbench`` MODELS registry
            (``vitbench.<dense_type>`` in mmseg / mmdet configs).
        upernet_levels, upernet_width: one of :data:`UPERNET_LEVELS`, :data:`UPERNET_WIDTHS`.
        windowed: Mask R-CNN keeps ViTDet's windowed attention and relative positions (``window_size``,
            ``global_attn_indexes``, ``use_rel_pos``); other families have those keys dropped.
        fixed_grid: its ``img_size`` fixes the token grid (the dense tasks build it for their crops / batches).
        checkpoint_formats: its own official / third-party key names; the formats every family shares (vitbench
            files, mmengine runners, timm names, ``{'model': ...}``, DDP prefixes) need none.
        swap_drops: backbone config keys a swap to this family removes from a dense task's config (one with an
            entry in downstream/backbone_swap.py ``ADAPTERS``): options of the suite's dense ViT it does not take.
        swap_drops_checkpoint: a swap to this family without ``--checkpoint`` drops the config's ``init_cfg``
            checkpoint, another backbone's weights that it cannot load (timm: it starts from timm's
            initialisation, or ``pretrained=True``); False: the config's checkpoint stays.
        describe_maps: ``fn(name, backbone_cfg) -> layout`` for a family outside the variant table (timm: its
            ``feature_info``); None: the task adapters read the variant's layout (``layout``: its constructor
            arguments completed with the model class's defaults).

    The model class provides the family contract (backbones/contract.py: prefix tokens, dims, the block walk,
    attention maps, the capabilities the pre-trainings need, layer ids for layer-wise decay ...), checked when
    the record is registered; the timm family (no model class) is timm's own.
    """
    name: str
    title: str
    model_class: Optional[type]
    dense_type: str
    upernet_levels: str = 'pyramid'
    upernet_width: str = 'by_width'
    windowed: bool = False
    fixed_grid: bool = False
    checkpoint_formats: Tuple[CheckpointFormat, ...] = ()
    swap_drops: Tuple[str, ...] = ()
    swap_drops_checkpoint: bool = False
    describe_maps: Optional[Callable[[str, dict], dict]] = None

    @property
    def variants(self) -> Tuple[str, ...]:
        """Its named variants, sorted."""
        return tuple(sorted(n for n, entry in VARIANTS.items() if entry['model'] == self.name))

    def layout(self, name: str, backbone: Optional[dict] = None) -> dict:
        """What the task adapters read of variant ``name`` (``embed_dim``, ``patch_size``, ``depth``, ...): its
        constructor arguments completed with the model class's defaults, or what ``describe_maps`` says of the
        model ``backbone`` (a dense config's backbone dict) asks for."""
        if self.describe_maps is not None:
            return self.describe_maps(name, backbone or {})
        return layout_of(self.model_class, VARIANTS[name]['kwargs'])


FAMILIES: Dict[str, Family] = {}


def register_family(family: Family, variants: Optional[Dict[str, dict]] = None) -> Family:
    """Add ``family`` (and its named ``variants``: ``{name: dict(paper=..., kwargs=...)}``) to the registry."""
    where = f'register_family({family.name!r})'
    if family.name in FAMILIES:
        raise ValueError(f'{where}: a family of that name is registered already ({FAMILIES[family.name].title})')
    if family.upernet_levels not in UPERNET_LEVELS or family.upernet_width not in UPERNET_WIDTHS:
        raise ValueError(f'{where}: upernet_levels={family.upernet_levels!r}, upernet_width='
                         f'{family.upernet_width!r}; expected one of {UPERNET_LEVELS} and one of {UPERNET_WIDTHS}')
    cls = family.model_class
    gaps = contract_gaps(cls) if cls is not None else []
    if gaps:
        raise TypeError(f"{where}: {cls.__name__} lacks {', '.join(gaps)} (the family contract, "
                        f"backbones/contract.py; backbones/vit.py ViTFamilyMixin provides most of it)")
    entries = dict(variants or {})
    taken = sorted(set(entries) & set(VARIANTS))
    if taken:
        raise ValueError(f'{where}: variant name(s) {taken} are taken (tools/list_backbones.py lists them)')
    for name, entry in entries.items():
        if set(entry) != {'paper', 'kwargs'}:
            raise ValueError(f"{where}: variant {name!r} has keys {sorted(entry)}, expected 'paper' and 'kwargs'")
    # its variants: the new ones, and those of the variant table (the built-in families')
    table = {n: e for n, e in VARIANTS.items() if e['model'] == family.name}
    for name, entry in {**table, **entries}.items() if cls is not None else ():
        gaps = layout_gaps(cls, entry['kwargs'])
        if gaps:
            raise ValueError(f"{where}: variant {name!r}: {', '.join(gaps)} (the task adapters read {LAYOUT} of "
                             f"its arguments completed with {cls.__name__}'s defaults)")
    FAMILIES[family.name] = family
    VARIANTS.update({name: dict(model=family.name, **entry) for name, entry in entries.items()})
    return family


def discover_families(package: str, path: Iterable[str]) -> None:
    """Import every module of ``package`` (its ``__path__``, sub-packages and ``_private`` modules aside): a
    family's model file registers its record when imported, so a family built into the suite is its file."""
    for module in pkgutil.iter_modules(path):
        if not module.ispkg and not module.name.startswith('_'):
            importlib.import_module(f'{package}.{module.name}')


def get_family(name: str) -> Family:
    """The record of family ``name``; an unregistered one is a KeyError saying which are and how to add one."""
    if name not in FAMILIES:
        raise KeyError(f"unknown backbone family {name!r}: registered families are {', '.join(sorted(FAMILIES))} "
                       f"(a family registers with backbones.family.register_family next to its model, "
                       f"docs/extending-backbone.md)")
    return FAMILIES[name]
