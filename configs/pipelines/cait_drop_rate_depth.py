# CaiT Figure 3 (thesis Figure 3.5): ImageNet top-1 of DeiT-S with LayerScale against the uniform stochastic-depth
# rate d_r, at depth 12, 18, 24 and 36 (300 epochs, the DeiT-S recipe; ε by depth, CaiT §2: 0.1 up to 18, 1e-5 at 24,
# 1e-6 at 36). The figure prints no numbers; its d_r grid is read off its x axis (0 to 0.4). One stage per (depth,
# d_r), all independent, then the leaderboard over them (its rows: one per depth and rate).
#   python tools/pipeline.py configs/pipelines/cait_drop_rate_depth.py [--dry-run] [--resume]
work_dir = 'work_dirs/cait_drop_rate_depth'
launcher = ['torchrun', '--nproc_per_node', '8']
slurm = dict(gpus_per_node=8, cpus_per_task=10, mem='320G', time='2-00:00:00')

_depths = (12, 18, 24, 36)
_rates = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4)
stages = [
    dict(name=f'deit_s{depth}_ls_dr{str(rate).replace(".", "")}', config='configs/pretrain/deit_small_in1k_300e.py',
         per_backbone=False, args=['--amp'],
         cfg_options={'model.backbone.depth': depth, 'model.backbone.residual_scale': 'layerscale',
                      'model.backbone.init_values': 'by_depth', 'model.backbone.drop_path_uniform': True,
                      'model.backbone.drop_path_rate': rate})
    for depth in _depths for rate in _rates]
stages.append(dict(name='leaderboard', kind='leaderboard', depends_on=[s['name'] for s in stages]))
