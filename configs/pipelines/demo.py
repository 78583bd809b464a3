# The embedded default, what `make demo` runs: `python tools/pipeline.py configs/pipelines/demo.py`.
# On the demo data (made here if absent), a tiny ViT (vit_demo_patch8_64) is pre-trained three ways on demo
# ImageNet: supervised with the DeiT III recipe, MAE, and distilled MAE whose teacher is that MAE. Each of the
# three backbones, plus a from-scratch baseline, then goes through transfer to demo CIFAR-10 and Flowers-102,
# UperNet on demo ADE20k and Mask R-CNN on demo COCO. The leaderboard (Markdown + HTML with plots) lands in
# work_dirs/demo/leaderboard.{md,html}; every stage's own folder is work_dirs/demo/vit_demo_patch8_64/<stage>.
# Stages already done (their result.json exists) are skipped, so running it again only redoes what is missing.
# `--backbones NAME` runs the same experiments for another named variant (each config swaps its backbone).
# No `seeds` here: every training runs once, with its config's own seed, to fit the time budget. For the spread
# over seeds, `--seeds 0,1,2` runs each one three times (folders <stage>/seed0 ... seed2), about 3x as long.
work_dir = 'work_dirs/demo'
backbones = ['vit_demo_patch8_64']
jobs = 2  # two one-thread stages at a time: on 2 cores, about 1.6x sooner than one two-thread stage at a time

# The pipeline's schedules are shorter than the stand-alone demos' (configs/demo/*.py) so that 19 trainings fit
# in 15 minutes on 2 cores (13.8–14.2 min measured, data generation included). The learning-rate schedules are
# shortened with them (list indices: param_scheduler.N).
_pretrain_epochs = 3
_pretrain = {'train_cfg.max_epochs': _pretrain_epochs, 'train_cfg.val_interval': _pretrain_epochs,
             'param_scheduler.1.end': _pretrain_epochs, 'default_hooks.checkpoint.interval': _pretrain_epochs,
             'experiment.pretrain.epochs': _pretrain_epochs}


def _iters(n, warmup):  # an iteration-based schedule: warm-up then the config's decay, ending at n
    return {'train_cfg.max_iters': n, 'train_cfg.val_interval': n, 'default_hooks.checkpoint.interval': n,
            'param_scheduler.0.end': warmup, 'param_scheduler.1.end': n}


def _epochs(n, warmup=1):  # an epoch-based fine-tuning schedule: warm-up (may be a fraction) then the decay
    return {'train_cfg.max_epochs': n, 'train_cfg.val_interval': n, 'default_hooks.checkpoint.interval': n,
            'param_scheduler.0.end': warmup, 'param_scheduler.1.begin': warmup, 'param_scheduler.1.end': n}


# the pre-trained backbones downstream stages start from (None: from scratch)
_init = dict(sup='deit3_sup', mae='mae', dmae='dmae', scratch=None)
_downstream = dict(  # config, shortened schedule; the longest first, so the short ones fill the end
    maskrcnn=('configs/demo/maskrcnn_demo.py', dict(_iters(90, 20), **{'param_scheduler.1.milestones': [72, 84]})),
    upernet=('configs/demo/upernet_demo.py', dict(_iters(40, 8), **{'param_scheduler.1.begin': 8})),
    flowers102=('configs/demo/transfer_flowers102_demo.py', _epochs(3)),
    cifar10=('configs/demo/transfer_cifar10_demo.py', _epochs(1, warmup=0.25)),
)
_make_data = ['tools/make_demo_data.py', '--out', 'data/demo', '--scale', 'small', '--workers', '1', '--datasets']

stages = [
    # a no-op when present; the downstream sets are drawn while the pre-training runs
    dict(name='data', kind='command', argv=_make_data + ['imagenet', 'imagenet_v2', 'imagenet_real']),
    dict(name='data_downstream', kind='command', argv=_make_data + ['ade20k', 'coco', 'cifar10', 'flowers102']),
    dict(name='deit3_sup', config='configs/demo/deit3_sup_demo.py', depends_on=['data'], outputs=['backbone.pth'],
         cfg_options=_pretrain),
    # masked image modelling needs a ViT: for another family (--backbones patchconvnet_demo_64) the MAE and dMAE
    # stages, and the downstream stages that start from them, are left out and the pipeline says so
    dict(name='mae', config='configs/demo/mae_demo.py', depends_on=['data'], outputs=['backbone.pth'],
         cfg_options=_pretrain, families=['vit']),
    # seeded like the others: seed k's teacher is seed k's MAE, so a dMAE row's spread includes its teacher's,
    # as when the whole recipe (MAE, then distillation) is run again (seeds='shared' would train one teacher)
    dict(name='dmae', config='configs/demo/dmae_demo.py', depends_on=['data', 'mae'], outputs=['backbone.pth'],
         cfg_options=dict(_pretrain, **{'model.teacher.checkpoint': '{mae}/backbone.pth'}), families=['vit']),
]
stages += [
    dict(name=f'{task}_{init}', config=config, cfg_options=schedule,
         depends_on=['data_downstream', source] if source else ['data_downstream'],
         checkpoint='{' + source + '}/backbone.pth' if source else None)
    for task, (config, schedule) in _downstream.items() for init, source in _init.items()
]
stages.append(dict(name='leaderboard', kind='leaderboard', depends_on=[s['name'] for s in stages],
                   out='{root}/leaderboard', formats=['md', 'html'],  # of the stages above
                   baseline='scratch'))  # what pre-training adds: each row against the from-scratch one
