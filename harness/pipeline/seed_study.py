"""A seed study of any recipe (thesis §6.3.4, Figures 6.7-6.10: ResNet-50 A2 trained with seeds 1 to 100):
``tools/pipeline.py --seed-study CONFIG --seeds 1-100`` trains CONFIG once per seed (``randomness.seed``, which
mmengine seeds the initialisation and the samplers' data order from) and ends with a leaderboard whose cells are the
mean ± std over the seeds, with the histogram of each cell's seeds, each seed's (val, V2) point and, from the
validations the runs log, the spread along the epochs (:mod:`vitbench.results.seed_plots`).

The pipeline is the dict a pipeline config would hold, checked and expanded by
:func:`harness.pipeline.spec.pipeline_from` like any other: it resumes, dry-runs and goes to Slurm the same way
(each seed one job there). A paper's own seed study is also a map entry (``--table "thesis:Figure 6.7"`` with
``--seeds``)."""
import os.path as osp
import re
from typing import List, Optional

from .dag import Pipeline, PipelineError
from .spec import pipeline_from

WORK_DIRS = 'work_dirs/seeds'  # default work dir: WORK_DIRS/CONFIG_STEM
DEFAULT_SEEDS = list(range(10))  # without --seeds: ten runs, the fewest a histogram says something with


def seed_study_config(config: str, work_dir: Optional[str] = None, backbone: Optional[str] = None) -> dict:
    """The pipeline config of a seed study of ``config`` (on ``backbone`` when given: ``--backbone``)."""
    stem = re.sub(r'\W', '_', osp.splitext(osp.basename(config))[0])
    stage = dict(name=stem, config=config, per_backbone=False)
    folder = stem
    if backbone:
        stage['args'] = ['--backbone', backbone]
        folder += '_on_' + re.sub(r'\W', '_', backbone)
    return dict(work_dir=work_dir or osp.join(WORK_DIRS, folder),
                stages=[stage, dict(name='leaderboard', kind='leaderboard', depends_on=[stem])])


def load_seed_study(config: str, work_dir: Optional[str] = None, launcher: Optional[List[str]] = None,
                    seeds: Optional[List[int]] = None, backbone: Optional[str] = None,
                    executor: Optional[str] = None, slurm: Optional[dict] = None,
                    imports: Optional[List[str]] = None) -> Pipeline:
    """The checked pipeline of a seed study (keywords as :func:`~harness.pipeline.spec.load_pipeline`'s; ``seeds``
    default :data:`DEFAULT_SEEDS`)."""
    if not osp.isfile(config):
        raise PipelineError(f'--seed-study {config}: no such config file (a training config, e.g. '
                            'configs/pretrain/rsb_a2_resnet50_in1k_300e.py)')
    path = f'--seed-study {config}'
    seeds = DEFAULT_SEEDS if seeds is None else seeds
    if len(seeds) < 2:
        raise PipelineError(f'{path}: --seeds gives {len(seeds)} seed; a seed study needs at least 2 (e.g. 1-100)')
    return pipeline_from(seed_study_config(config, work_dir, backbone), path, None, launcher, work_dir, seeds,
                         None, executor, slurm, imports)
