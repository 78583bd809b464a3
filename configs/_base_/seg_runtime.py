# Runtime of every segmentation config: mmseg's scope, with vitbench's backbones and seg glue imported.
default_scope = 'mmseg'
custom_imports = dict(imports=['backbones', 'downstream'], allow_failed_imports=False)
env_cfg = dict(
    cudnn_benchmark=True,
    mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    dist_cfg=dict(backend='nccl'))
vis_backends = [dict(type='LocalVisBackend')]
visualizer = dict(type='SegLocalVisualizer', vis_backends=vis_backends, name='visualizer')
log_processor = dict(by_epoch=False)
log_level = 'INFO'
load_from = None
resume = False
tta_model = dict(type='SegTTAModel')  # tools/test.py --tta wraps the model in it
