"""A checked pipeline's stages expanded into the instances that run: one per backbone of a per-backbone stage, one
per seed of a seeded one, less those a backbone's family cannot run; each with its dependencies and the instance
each ``{STAGE}`` reference means, in run order."""
import os.path as osp
from typing import Dict, List, Optional, Tuple

from .dag import PipelineError, Stage
from .validate import SEEDED_KINDS, references


def stages_left_out(path, specs, by_name, backbones) -> Dict[Tuple[str, str], str]:
    """{(stage name, backbone): why} for the per-backbone stages a backbone cannot run: those whose
    ``families`` leave out the backbone's family (e.g. MAE needs a ViT), and everything that depends on one."""
    from backbones.factory import family_of, list_models
    known = sorted({family_of(name) for name in list_models()} | {'timm'})
    for spec in specs:
        families = spec.get('families')
        if families is not None and not (isinstance(families, list) and families and set(families) <= set(known)):
            raise PipelineError(f"{path}: stage '{spec['name']}': key 'families' is {families!r}, expected a list "
                                f'of backbone families from {known}')
    out: Dict[Tuple[str, str], str] = {}
    for backbone in backbones:
        family = family_of(backbone)
        changed = True
        while changed:  # until every dependent of a left-out stage is left out too
            changed = False
            for spec in (s for s in specs if s['per_backbone'] and (s['name'], backbone) not in out):
                if spec.get('families') and family not in spec['families']:
                    out[spec['name'], backbone] = (f"{backbone}/{spec['name']}: left out, it runs on "
                                                   f"{' / '.join(spec['families'])} backbones, not {family}")
                else:
                    missing = [d for d in spec['depends_on'] if (d, backbone) in out]
                    if missing:
                        out[spec['name'], backbone] = (f"{backbone}/{spec['name']}: left out, it needs "
                                                       f"{backbone}/{missing[0]}")
                changed |= (spec['name'], backbone) in out
    return out


def expand_stages(path, root, specs, by_name, backbones, seeds, left_out) -> List[Stage]:
    instances: List[Stage] = []

    def seeds_of(spec):
        """(randomness.seed, id suffix) of each of a stage's instances; one seed keeps the plain id and folder."""
        if not seeds or spec['kind'] not in SEEDED_KINDS:
            return [(None, None)]
        if spec.get('seeds') == 'shared' or len(seeds) == 1:
            return [(seeds[0], None)]
        return [(k, f'seed{k}') for k in seeds]

    def ids_of(name, backbone, suffix):
        """The instances of stage ``name`` that an instance for ``backbone`` and seed ``suffix`` means: the same
        backbone's and seed's where both vary by them, else all of them."""
        spec = by_name[name]
        chosen = [b for b in ([backbone] if backbone else backbones) if (name, b) not in left_out]
        suffixes = [s for _, s in seeds_of(spec)]
        return [_stage_id(b, name, s) for b in (chosen if spec['per_backbone'] else [None])
                for s in ([suffix] if suffix and len(suffixes) > 1 else suffixes)]

    for spec in specs:
        name = spec['name']
        for backbone in (backbones if spec['per_backbone'] else [None]):
            if (name, backbone) in left_out:
                continue
            for seed, suffix in seeds_of(spec):
                stage_id = _stage_id(backbone, name, suffix)
                stage = Stage(id=stage_id, name=name, kind=spec['kind'], spec=spec, backbone=backbone, seed=seed,
                              work_dir=osp.join(root, *stage_id.split('/')))  # the folder mirrors the id
                stage.deps = [i for dep in spec['depends_on'] for i in ids_of(dep, backbone, suffix)]
                for ref in (n for n in references(spec, path) if n in by_name):
                    meant = ids_of(ref, backbone, suffix)
                    if len(meant) > 1:  # an unseeded stage referring to a per-seed one: which seed's?
                        raise PipelineError(f"{path}: stage '{name}': runs once for all seeds (a command or "
                                            f"leaderboard stage, or seeds='shared') but refers to {{{ref}}}, which "
                                            f"runs once per seed; give '{ref}' seeds='shared' to run it once")
                    stage.refs[ref] = meant[0]
                instances.append(stage)
    # run order: dependencies first, otherwise as declared (stage by stage, backbone by backbone, seed by seed)
    position = {s.id: i for i, s in enumerate(instances)}
    done, ordered = set(), []
    while len(ordered) < len(instances):
        ready = min((s for s in instances if s.id not in done and all(d in done for d in s.deps)),
                    key=lambda s: position[s.id])
        done.add(ready.id)
        ordered.append(ready)
    return ordered


def _stage_id(backbone: Optional[str], name: str, seed_suffix: Optional[str]) -> str:
    # timm:NAME -> timm-NAME: the id is also a folder, and a colon would make its relative links URLs
    return '/'.join(filter(None, (backbone and backbone.replace(':', '-'), name, seed_suffix)))
