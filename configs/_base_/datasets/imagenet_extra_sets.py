# Extra test sets evaluated after the last validation of every ImageNet classification training whose data is
# present (pretrain/extra_eval.py; a missing set is skipped with a log line): ImageNet-V2 (matched frequency) and
# ImageNet-ReaL give top1_v2, top5_v2 and top1_real next to top1 (layouts: pretrain/imagenet_variants.py); the
# robustness sets give top1_a, top1_r (argmax over their 200 classes), top1_sketch, top5_sketch, and ImageNet-C's
# mCE with each corruption's CE_<c> and error_<c> (layouts: pretrain/robustness.py; metrics:
# pretrain/robustness_metrics.py). All are read with the validation pipeline. ImageNet-C is 75 passes of the
# 50k val images (15 corruptions x 5 severities): the longest of these evaluations by far.
val_cfg = dict(
    type='ExtraSetsValLoop',
    extra_sets=[
        dict(dataset=dict(type='ImageNetV2', data_root='data/imagenetv2-matched-frequency-format-val'),
             evaluator=dict(type='Accuracy', topk=(1, 5), suffix='_v2')),
        dict(dataset=dict(type='ImageNetReaL', data_root='data/imagenet', ann_file='real.json'),
             evaluator=dict(type='ReaLAccuracy')),
        dict(dataset=dict(type='ImageNetA', data_root='data/imagenet-a'),
             evaluator=dict(type='ClassSubsetAccuracy', classes='imagenet_a')),
        dict(dataset=dict(type='ImageNetR', data_root='data/imagenet-r'),
             evaluator=dict(type='ClassSubsetAccuracy', classes='imagenet_r')),
        dict(dataset=dict(type='ImageNetSketch', data_root='data/imagenet-sketch/sketch'),
             evaluator=dict(type='Accuracy', topk=(1, 5), suffix='_sketch')),
        dict(dataset=dict(type='ImageNetC', data_root='data/imagenet-c'),
             evaluator=dict(type='CorruptionError')),
    ])
