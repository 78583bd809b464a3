# MAE-lite's study ("A closer look at self-supervised lightweight vision transformers") at demo scale: the demo
# ViT pre-trained by MAE, distilled MAE, MoCo-v3 and the supervised DeiT-Tiny recipe, each transferred to demo
# Flowers-102 and CIFAR-10 beside a from-scratch baseline (Tables 1 and 4), the layer analyses of §4 (CKA,
# attention distance / entropy, Fourier; Figs. 1, 3, 5) and the keep-first-k-blocks experiment (Figs. 2, 4).
#   python tools/pipeline.py configs/pipelines/demo_maelite.py   # -> work_dirs/demo_maelite/leaderboard.{md,html}
# The pre-trainings and transfers are the demo configs' own schedules (configs/demo/*.py), as in demo.py; the
# figures land in work_dirs/demo_maelite/vit_demo_patch8_64/{analysis,keep_blocks}/.
work_dir = 'work_dirs/demo_maelite'
backbones = ['vit_demo_patch8_64']
jobs = 2

_amp = ['--amp', 'auto']
_pretrain = dict(mae='configs/demo/mae_demo.py', mocov3='configs/demo/mocov3_demo.py',
                 deit_tiny='configs/demo/deit_tiny_sup_demo.py')
_init = dict(mae='mae', dmae='dmae', mocov3='mocov3', deit_tiny='deit_tiny', scratch=None)
_transfer = dict(flowers102='configs/demo/transfer_flowers102_demo.py',
                 cifar10='configs/demo/transfer_cifar10_demo.py')
_make_data = ['tools/make_demo_data.py', '--out', 'data/demo', '--scale', 'small', '--workers', '1', '--datasets']
_keep = [2, 4]  # of the demo ViT's 6 blocks; 6 and 0 are the flowers102_<init> and flowers102_scratch rows

stages = [
    dict(name='data', kind='command', argv=_make_data + ['imagenet', 'imagenet_v2', 'imagenet_real']),
    dict(name='data_downstream', kind='command', argv=_make_data + ['cifar10', 'flowers102']),
]
stages += [dict(name=name, config=config, depends_on=['data'], outputs=['backbone.pth'], args=_amp, families=['vit'])
           for name, config in _pretrain.items()]
stages.append(dict(name='dmae', config='configs/demo/dmae_demo.py', depends_on=['data', 'mae'],
                   outputs=['backbone.pth'], cfg_options={'model.teacher.checkpoint': '{mae}/backbone.pth'},
                   args=_amp, families=['vit']))
stages += [dict(name=f'{task}_{init}', config=config, args=_amp, families=['vit'],
                depends_on=['data_downstream', source] if source else ['data_downstream'],
                checkpoint='{' + source + '}/backbone.pth' if source else None)
           for task, config in _transfer.items() for init, source in _init.items()]
stages += [dict(name=f'keep{k}_{init}', config=_transfer['flowers102'], args=_amp + ['--keep-blocks', str(k)],
                depends_on=['data_downstream', init], checkpoint='{' + init + '}/backbone.pth', families=['vit'])
           for init in ('mae', 'deit_tiny') for k in _keep]
stages += [
    # the pre-trained inits as a list, in _init's order (a set's order changed from run to run)
    dict(name='analysis', kind='command', per_backbone=True, depends_on=['data', *[s for s in _init if s != 'scratch']],
         argv=['tools/analyze.py', 'all', '--models', *[f'{s}={{root}}/{{backbone}}/{s}' for s in _init if s != 'scratch'],
               'scratch=random@{backbone}', '--images', 'data/demo/imagenet/val', '--num-images', '256',
               '--out', '{work_dir}'],
         creates='{work_dir}/fourier.png'),
    dict(name='keep_blocks', kind='command', per_backbone=True,
         depends_on=[f'keep{k}_{i}' for i in ('mae', 'deit_tiny') for k in _keep]
         + [f'flowers102_{i}' for i in ('mae', 'deit_tiny', 'scratch')],
         argv=['tools/analyze.py', 'keep-blocks', '{root}/{backbone}', '--dataset', 'flowers102', '--out', '{work_dir}'],
         creates='{work_dir}/keep_blocks.png'),
]
stages.append(dict(name='leaderboard', kind='leaderboard', baseline='scratch', formats=['md', 'html'],
                   figures=['{root}/*/analysis/*.png', '{root}/*/keep_blocks/*.png'],  # embedded in the HTML
                   depends_on=[s['name'] for s in stages if s.get('kind', 'train') == 'train'
                               and not s['name'].startswith('keep')] + ['analysis', 'keep_blocks']))
