"""The protocol a linked config defines: what a paper row's ``config`` resolves to (name and digest of its settings,
as :func:`harness.experiment.protocol.protocol_of` computes them for a run), for the leaderboard's paper links.

The leaderboard (``vitbench/results``, torch-free and below the harness) cannot read configs; the tools that write
it (``tools/leaderboard.py``, the pipeline's leaderboard stage) pass :func:`config_protocol` down, and a measured
cell links to a paper row only when its runs recorded the digest the row's config resolves to
(:mod:`vitbench.results.reproduction`). Reading a config with mmengine takes a few tens of milliseconds and imports
no torch; its ``custom_imports`` are not run (the protocol's settings are plain values).
"""
import functools
from typing import Optional

from harness.experiment.protocol import protocol_of


@functools.lru_cache(maxsize=None)
def config_protocol(config: str) -> Optional[dict]:
    """``{'name': ..., 'digest': ...}`` of the config a paper row names ('configs/<folder>/<name>.py': from the
    working directory, else the copy shipped with vitbench), with the options of its ``run`` applied (a link
    target, :func:`vitbench.results.experiment.link_target`: an option may change a setting of the protocol);
    None for a config without a protocol. A config that cannot be read is an error naming it (a paper row that
    links a missing config is a broken link)."""
    from mmengine.config import Config

    from vitbench.console import config_path
    from vitbench.results.experiment import split_target
    config, options = split_target(config)
    path = config_path(config)
    try:
        cfg = Config.fromfile(path, import_custom_modules=False)
        cfg.merge_from_dict(options)
    except Exception as e:  # noqa: BLE001 - a missing file, a syntax error, a missing _base_: one line
        raise ValueError(f'{config}: the config a paper row links cannot be read ({type(e).__name__}: '
                         f'{str(e).splitlines()[0] if str(e) else ""})') from None
    return protocol_of(cfg)
