# Backbones the suite did not write, side by side: the same downstream experiments for each one, ranked in one
# leaderboard, as Battle of the Backbones (Goldblum et al., NeurIPS 2023) compares ConvNeXt, Swin, ResNet and ViTs
# through one protocol. On the demo data, two of timm's tiny test models, from their random initialisation (their
# weights would come from `--checkpoint` or the local Hugging Face cache, never downloaded):
#   python tools/pipeline.py configs/pipelines/zoo_demo.py
#   python tools/pipeline.py configs/pipelines/zoo_demo.py --backbones timm:test_resnet,timm:test_vit,vit_demo_patch8_64
# Every backbone runs the demo's four downstream experiments with the demo configs' own schedules
# (configs/demo/*_demo.py): UperNet on ADE20k-demo, Mask R-CNN on COCO-demo (a hierarchical model through an FPN, a
# plain one through the ViTDet pyramid: downstream/{seg,det}/swap.py), transfer to CIFAR-10 and Flowers-102.
# The leaderboard (work_dirs/zoo_demo/leaderboard.{md,html}) has one row per backbone, with its parameters, FLOPs
# and cost. Nothing is expected of the ordering: tiny random models measure the plumbing, not the architectures.
work_dir = 'work_dirs/zoo_demo'
backbones = ['timm:test_convnext', 'timm:test_vit']
jobs = 2  # as the demo: two one-thread stages at a time on 2 cores

_amp = ['--amp', '{{$VITBENCH_AMP:auto}}']
_make_data = ['tools/make_demo_data.py', '--out', 'data/demo', '--scale', 'small', '--workers', '1', '--datasets',
              'ade20k', 'coco', 'cifar10', 'flowers102']
_downstream = dict(  # the longest first, so the short ones fill the end
    maskrcnn='configs/demo/maskrcnn_demo.py',
    upernet='configs/demo/upernet_demo.py',
    flowers102='configs/demo/transfer_flowers102_demo.py',
    cifar10='configs/demo/transfer_cifar10_demo.py',
)
stages = [dict(name='data_downstream', kind='command', argv=_make_data)]  # a no-op when present
stages += [dict(name=task, config=config, args=_amp, depends_on=['data_downstream'])
           for task, config in _downstream.items()]
stages.append(dict(name='leaderboard', kind='leaderboard', depends_on=[s['name'] for s in stages],
                   out='{root}/leaderboard', formats=['md', 'html']))
