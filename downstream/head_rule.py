"""The widths of a dense task's heads and neck: one rule per protocol, applied to whatever backbone a run has.

A protocol (``configs/_base_/protocols/<name>.py``, or a demo config's own) states them in
``experiment.protocol.heads``, one entry per group of widths the task defines (its ``HEAD_TARGETS``)::

    heads=dict(decode_head='by_width', auxiliary_head=256)   # UperNet as the DeiT III thesis sizes it
    heads=dict(pyramid=256, box_fc=1024)                      # Mask R-CNN as ViTDet sizes it, whatever the backbone

An entry is a number of channels (the same for every backbone) or the name of a rule of the backbone's width
(its ``embed_dim``; for a hierarchical timm model, its last map's channels): ``'embed_dim'`` (that width: BEiT's
768 for ViT-B, 1024 for ViT-L) or ``'by_width'`` (the DeiT III thesis' 512 / 384 / 192 by width, as the backbone's
family record's ``upernet_width`` states it: PatchConvNet keeps 512 from S up). The same rule gives the widths of
every run, the config's own backbone and a ``--backbone`` swap alike (downstream/backbone_swap.py), and the
protocol's digest records it (harness/experiment/protocol.py), so runs with different rules are never one cell.
"""
from typing import Callable, Dict, Tuple

from backbones.family import Family

from .seg.swap import WIDTHS


def backbone_width(layout: dict) -> int:
    """The width a rule reads: the plain backbone's ``embed_dim``, a hierarchical one's last map."""
    return layout['embed_dim'] if layout.get('kind') != 'hierarchical' else layout['channels'][-1]


# a rule's name -> fn(backbone width, family record) -> channels
RULES: Dict[str, Callable[[int, Family], int]] = {
    'by_width': lambda width, family: WIDTHS[family.upernet_width](width),
    'embed_dim': lambda width, family: width,
}


def resolve(heads: dict, targets: Dict[str, Tuple[str, ...]], layout: dict, family: Family,
            where: str) -> Dict[str, int]:
    """{dotted config key: channels} that rule ``heads`` gives a backbone of ``layout`` and ``family``; ``targets``:
    the task's groups of keys (each group takes one width)."""
    if not isinstance(heads, dict) or set(heads) - set(targets):
        raise ValueError(f'{where} is {heads!r}, expected a dict with keys from {sorted(targets)}')
    widths = {}
    for group, rule in heads.items():
        if isinstance(rule, str) and rule in RULES:
            width = RULES[rule](backbone_width(layout), family)
        elif isinstance(rule, int) and not isinstance(rule, bool) and rule > 0:
            width = rule
        else:
            raise ValueError(f'{where}.{group} is {rule!r}, expected a number of channels or one of {sorted(RULES)}')
        widths.update({key: width for key in targets[group]})
    return widths
