# The MAE-lite benchmark at real scale ("A Closer Look at Self-Supervised Lightweight Vision Transformers",
# Tables 1, 4 and 5; GPUs and the real datasets under data/):
#   python tools/pipeline.py configs/pipelines/paper_maelite.py [--resume]
# MAE-Tiny (vit_tiny12h_patch16_224) is pre-trained with MAE for 400 epochs, and with distilled MAE whose
# teacher is an MAE-Base pre-trained 1600 epochs first (stage mae_base_teacher; with the official
# mae_pretrain_vit_base.pth instead, drop that stage and point dmae's model.teacher.checkpoint at the file).
# Both, and a from-scratch baseline for ImageNet, are then fine-tuned on ImageNet (300 epochs, "impr." recipe),
# linearly probed, transferred to Flowers-102, Pets, Aircraft, Cars, CIFAR-100 and iNat-18, and trained with
# Mask R-CNN on COCO and UperNet on ADE20k. Commands run under torchrun on 8 GPUs (--launcher to change).
work_dir = 'work_dirs/paper_maelite'
backbones = ['vit_tiny12h_patch16_224']
launcher = ['torchrun', '--nproc_per_node', '8']

_transfer = ['flowers102', 'pets', 'aircraft', 'cars', 'cifar100', 'inat2018']
_downstream = dict(
    ft300='configs/finetune/mae_lite_vit_tiny12h_ft_300e.py',
    linprobe='configs/finetune/mae_vit_tiny12h_linprobe.py',
    maskrcnn='configs/maskrcnn_vit_tiny12h_mae.py',
    upernet='configs/upernet_vit_tiny12h_mae.py',
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
]
stages += [dict(name=f'{task}_{init}', config=config, depends_on=[init], checkpoint='{' + init + '}/backbone.pth',
                cfg_options=_protocol.get(task))
           for task, config in _downstream.items() for init in ('mae', 'dmae')]
# "from scratch" of Table 1: the same fine-tuning without pre-trained weights
stages.append(dict(name='ft300_scratch', config=_downstream['ft300'],
                   cfg_options={'model.backbone.init_cfg': None, 'experiment.pretrain': None}))
stages.append(dict(name='leaderboard', kind='leaderboard', depends_on=[s['name'] for s in stages]))
