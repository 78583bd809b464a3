# ImageNet-V2 (matched frequency) and ImageNet-ReaL, evaluated after the last validation of every ImageNet
# classification training whose data is present (pretrain/extra_eval.py; a missing set is skipped with a log
# line): result.json gets top1_v2, top5_v2 and top1_real next to top1. Layouts: pretrain/imagenet_variants.py.
val_cfg = dict(
    type='ExtraSetsValLoop',
    extra_sets=[
        dict(dataset=dict(type='ImageNetV2', data_root='data/imagenetv2-matched-frequency-format-val'),
             evaluator=dict(type='Accuracy', topk=(1, 5), suffix='_v2')),
        dict(dataset=dict(type='ImageNetReaL', data_root='data/imagenet', ann_file='real.json'),
             evaluator=dict(type='ReaLAccuracy')),
    ])
