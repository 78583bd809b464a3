# The MAE-lite benchmark at real scale ("A Closer Look at Self-Supervised Lightweight Vision Transformers",
# Tables 1, 3, 4 and 5; GPUs and the real datasets under data/):
#   python tools/pipeline.py configs/pipelines/paper_maelite.py [--resume]
# MAE-Tiny (vit_tiny12h_patch16_224) is pre-trained with MAE for 400 epochs, and with distilled MAE whose
# teacher is an MAE-Base pre-trained 1600 epochs first (stage mae_base_teacher; with the official
# mae_pretrain_vit_base.pth instead, drop that stage and point dmae's model.teacher.checkpoint at the file).
# MoCo-v3 pre-trains the same encoder for 400 epochs; MAE and MoCo-v3 also pre-train on ImageNet subsets (Table 3).
# They are then fine-tuned on ImageNet (300 epochs, "impr." recipe); the three full-set ones are also linearly
# probed, transferred to Flowers-102, Pets, Aircraft, Cars, CIFAR-100 and iNat-18, and trained with Mask R-CNN on
# COCO and with Semantic FPN on ADE20k (MAE-lite's ADE20k protocol, semfpn_maelite160k). The supervised baseline DeiT-Tiny (the same encoder from scratch, 300 epochs) goes
# through the same transfer and COCO / ADE20k stages. Commands run under torchrun on 8 GPUs (--launcher to change).
work_dir = 'work_dirs/paper_maelite'
backbones = ['vit_tiny12h_patch16_224']
launcher = ['torchrun', '--nproc_per_node', '8']
# On a Slurm cluster (executor = 'slurm', or tools/pipeline.py --executor slurm --partition P): every stage is one
# job, one task per GPU, on the GPUs the configs' batch sizes assume (the official commands: 1 node x 8 GPUs,
# 2 x 8 where a config says 16 GPUs); the long pretrainings are requeued at their time limit and resume.
slurm = dict(gpus_per_node=8, cpus_per_task=10, mem='320G', time='1-00:00:00')

_transfer = ['flowers102', 'pets', 'aircraft', 'cars', 'cifar100', 'inat2018']
_ft300 = dict(mae='configs/finetune/mae_lite_vit_tiny12h_ft_300e.py',
              dmae='configs/finetune/mae_lite_vit_tiny12h_ft_300e.py',
              mocov3='configs/finetune/mocov3_vit_tiny12h_ft_300e.py')  # layer decay 0.75, class token (MOCOV3.md)
_downstream = dict(
    ft300=_ft300,
    linprobe='configs/finetune/mae_vit_tiny12h_linprobe.py',
    maskrcnn='configs/maskrcnn_vit_tiny12h_mae.py',
    semfpn='configs/semfpn_vit_tiny12h_mae.py',  # MAE-lite's own ADE20k protocol (not UperNet)
    **{f'transfer_{d}': f'configs/transfer/{d}_vit_tiny12h_mae.py' for d in _transfer})
_protocol = dict(linprobe={'experiment.eval': 'linear'})  # its own leaderboard column

stages = [
    dict(name='mae', config='configs/pretrain/mae_vit_tiny12h_in1k_400e.py', outputs=['backbone.pth']),
    # the paper's teacher is one fixed MAE-Base (the official weights): with --seeds it is trained once, with the
    # first seed, and every seed of dmae distils from it
    dict(name='mae_base_teacher', config='configs/pretrain/mae_vit_base_in1k_1600e.py', per_backbone=False,
         outputs=['backbone.pth'], seeds='shared'),
    dict(name='dmae', config='configs/pretrain/dmae_vit_tiny12h_in1k_400e.py', depends_on=['mae_base_teacher'],
         cfg_options={'model.teacher.checkpoint': '{mae_base_teacher}/backbone.pth'}, outputs=['backbone.pth']),
    # MoCov3-Tiny (Tables 1 and 4)
    dict(name='mocov3', config='configs/pretrain/mocov3_vit_tiny12h_in1k_400e.py', outputs=['backbone.pth']),
    # "from scratch" of Table 1, "DeiT-Tiny" of Tables 4 and 5: the "impr." recipe (the fine-tuning without
    # pre-trained weights, 75.8) and DeiT's own ("ori.", 74.5)
    dict(name='deit_tiny', config='configs/pretrain/deit_tiny12h_in1k_300e.py', outputs=['backbone.pth']),
    dict(name='deit_tiny_ori', config='configs/pretrain/deit_tiny12h_in1k_300e_ori.py'),
]
stages += [dict(name=f'{task}_{init}', config=config[init] if isinstance(config, dict) else config,
                depends_on=[init], checkpoint='{' + init + '}/backbone.pth', cfg_options=_protocol.get(task))
           for task, config in _downstream.items() for init in ('mae', 'dmae', 'mocov3')]
# Table 3: MAE and MoCo-v3 pre-trained on 1 % and 10 % of ImageNet-1k (lists shipped in pretrain/subsets/) and on
# ImageNet-LT (its ImageNet_LT_train.txt in data/imagenet/), as many iterations as on the full set, then fine-tuned
_subsets = ('1pct', '10pct', 'lt')
stages += [dict(name=f'{recipe}_{subset}', config=f'configs/pretrain/{recipe}_vit_tiny12h_in1k{subset}_400e.py',
                outputs=['backbone.pth']) for recipe in ('mae', 'mocov3') for subset in _subsets]
stages += [dict(name=f'ft300_{recipe}_{subset}', config=_ft300[recipe], depends_on=[f'{recipe}_{subset}'],
                checkpoint='{' + f'{recipe}_{subset}' + '}/backbone.pth')
           for recipe in ('mae', 'mocov3') for subset in _subsets]
# the supervised baseline is already an ImageNet classifier: transfer and COCO only (Tables 4 and 5)
stages += [dict(name=f'{task}_deit_tiny', config=config, depends_on=['deit_tiny'],
                checkpoint='{deit_tiny}/backbone.pth')
           for task, config in _downstream.items() if task not in ('ft300', 'linprobe')]
stages.append(dict(name='leaderboard', kind='leaderboard', depends_on=[s['name'] for s in stages]))
_resources = {name: dict(time='3-00:00:00')  # the pre-trainings
              for name in ('mae', 'mae_base_teacher', 'dmae', 'mocov3', 'deit_tiny', 'deit_tiny_ori')
              + tuple(f'{recipe}_{subset}' for recipe in ('mae', 'mocov3') for subset in _subsets)}
_resources['leaderboard'] = dict(gpus_per_node=0, cpus_per_task=2, mem='16G', time=60)
for _stage in stages:  # Slurm resources beyond the defaults above
    _stage.setdefault('resources', _resources.get(_stage['name']))
