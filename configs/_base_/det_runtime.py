# Runtime of every detection config: mmdet's scope, with vitbench's backbones and detection glue imported.
default_scope = 'mmdet'
custom_imports = dict(imports=['backbones', 'downstream'], allow_failed_imports=False)
env_cfg = dict(
    cudnn_benchmark=False,  # LSJ batches have one fixed size, but test images vary before padding
    mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    dist_cfg=dict(backend='nccl'))
vis_backends = [dict(type='LocalVisBackend')]
visualizer = dict(type='DetLocalVisualizer', vis_backends=vis_backends, name='visualizer')
log_processor = dict(type='LogProcessor', window_size=50, by_epoch=False)
log_level = 'INFO'
load_from = None
resume = False
