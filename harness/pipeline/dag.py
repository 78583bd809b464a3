"""What a pipeline config becomes once checked (:mod:`harness.pipeline.spec`): the stage instances, in run order,
and the pipeline that holds them; and the error a config that cannot run raises."""
from dataclasses import dataclass, field
from typing import Dict, List, Optional


class PipelineError(ValueError):
    """A pipeline config that cannot run; the message names the file, the stage and the key."""


@dataclass
class Stage:
    """One stage instance: a declared stage, for one backbone when it runs per backbone, for one seed when it
    runs per seed."""
    id: str  # 'NAME', 'BACKBONE/NAME', 'BACKBONE/NAME/seedK' (or 'NAME/seedK')
    name: str
    kind: str
    spec: dict
    work_dir: str
    backbone: Optional[str] = None  # the backbone of a per-backbone instance
    seed: Optional[int] = None  # the randomness.seed it runs with (None: the config's own)
    deps: List[str] = field(default_factory=list)  # ids
    refs: Dict[str, str] = field(default_factory=dict)  # template name -> id of the stage it means
    config: Optional[str] = None  # train / test
    swap: Optional[str] = None  # --backbone to pass (None: the config's own backbone)
    task: Optional[str] = None  # experiment.task of the config
    # sha256 of what the config holds, _base_ files merged: computed by stage_config.py, compared by record.py
    config_digest: Optional[str] = None


@dataclass
class Pipeline:
    path: str
    work_dir: str
    backbones: List[str]
    stages: List[Stage]  # in run order: every stage after its dependencies
    launcher: List[str] = field(default_factory=list)  # prefix of train / test commands (torchrun ...)
    jobs: int = 1  # stages run at the same time
    seeds: List[int] = field(default_factory=list)  # [] when none are given: the configs' own seeds
    left_out: List[str] = field(default_factory=list)  # per-backbone stages a backbone's family cannot run, why
    executor: str = 'local'  # or 'slurm' (harness/pipeline/slurm.py)
    slurm: dict = field(default_factory=dict)  # the stages' default Slurm resources (resources.py)
    vis_backends: List[str] = field(default_factory=list)  # --vis-backend of train stages; no part of their recipe
    # modules from outside the suite (a task, a family): imported here, --imports of train / test stages; no part of
    # their recipe (what a module registers changes no config)
    imports: List[str] = field(default_factory=list)

    def stage(self, stage_id: str) -> Stage:
        return next(s for s in self.stages if s.id == stage_id)
