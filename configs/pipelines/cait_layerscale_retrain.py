# CaiT §4.1 "Re-training" (thesis §3.5.3) alone: DeiT-S with LayerScale at depth 12, 18, 24 and 36 (300 epochs, ε by
# depth, CaiT §2; uniform drop path as Table 1's adjusted baseline), then the same model re-trained from scratch with
# the scales the first training learnt, frozen: --checkpoint names the first training's backbone.pth and
# model.backbone.residual_scale_from=checkpoint takes only its scales (residual_scale_trainable=False freezes them).
# Expected: LayerScale 80.5 / 81.7 / 82.4 / 82.9, re-trained with fixed weights 80.6 / 81.5 / 81.2 / 81.6.
# These eight stages are eight of the 28 rows of `python tools/pipeline.py --table cait:1` (the map,
# vitbench/results/papers/cait.yaml, Table 1), with the same options, so their runs link to those rows; this file
# runs them without the other 20 trainings of the table, under --amp (tests/test_pipeline_table.py keeps the two the
# same).
#   python tools/pipeline.py configs/pipelines/cait_layerscale_retrain.py [--dry-run] [--resume]
work_dir = 'work_dirs/cait_layerscale_retrain'
launcher = ['torchrun', '--nproc_per_node', '8']
slurm = dict(gpus_per_node=8, cpus_per_task=10, mem='320G', time='2-00:00:00')

_drop_path = {12: 0.05, 18: 0.1, 24: 0.2, 36: 0.25}  # CaiT Table 1, the baseline's adjusted d_r


def _options(depth):
    return {'model.backbone.depth': depth, 'model.backbone.residual_scale': 'layerscale',
            'model.backbone.init_values': 'by_depth', 'model.backbone.drop_path_uniform': True,
            'model.backbone.drop_path_rate': _drop_path[depth]}


stages = []
for _depth in _drop_path:
    stages.append(dict(name=f'layerscale_d{_depth}', config='configs/pretrain/deit_small_in1k_300e.py',
                       per_backbone=False, args=['--amp'], cfg_options=_options(_depth), outputs=['backbone.pth']))
    stages.append(dict(name=f'fixed_d{_depth}', config='configs/pretrain/deit_small_in1k_300e.py',
                       per_backbone=False, args=['--amp'], depends_on=[f'layerscale_d{_depth}'],
                       checkpoint=f'{{layerscale_d{_depth}}}/backbone.pth',
                       cfg_options=dict(_options(_depth), **{
                           'model.backbone.residual_scale_trainable': False,
                           'model.backbone.residual_scale_from': 'checkpoint',
                           'experiment.pretrain.recipe': 'supervised:fixed LayerScale'})))
stages.append(dict(name='leaderboard', kind='leaderboard', depends_on=[s['name'] for s in stages]))
