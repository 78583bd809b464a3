# The embedded default, what `make demo` runs: `python tools/pipeline.py configs/pipelines/demo.py`.
# On the demo data (made here if absent), a tiny ViT (vit_demo_patch8_64) is pre-trained three ways on demo
# ImageNet: supervised (configs/demo/sup_demo.py), MAE, and distilled MAE whose teacher is that MAE. Each of the
# three backbones, plus a from-scratch baseline, then goes through transfer to demo CIFAR-10 and Flowers-102 and
# UperNet on demo ADE20k; the supervised and scratch ones also through Mask R-CNN on demo COCO (_rows below says
# why only those two). The leaderboard (Markdown + HTML with plots) lands in
# work_dirs/demo/leaderboard.{md,html}; every stage's own folder is work_dirs/demo/vit_demo_patch8_64/<stage>.
# Stages already done (their result.json exists) are skipped, so running it again only redoes what is missing.
# `--backbones NAME` runs the same experiments for another named variant (each config swaps its backbone).
# No `seeds` here: every training runs once, with its config's own seed, to fit the time budget. For the spread
# over seeds, `--seeds 0,1,2` runs each one three times (folders <stage>/seed0 ... seed2), about 3x as long.
#
# The schedules are the demo configs' own (configs/demo/*.py): one source of truth, so a stand-alone
# `tools/train.py configs/demo/X.py` is the pipeline's stage X. Training stages run with `--amp auto`: bfloat16
# where the CPU has fast bf16 units (1.7-1.9x faster for the demo ViT) and on GPUs that have it, float16 for
# detection on GPUs, float32 elsewhere (AVX2 CPUs); result.json records which (cost.precision).
# `VITBENCH_AMP=off make demo` trains every stage in float32 instead (`--amp off`), as an AVX2 CPU does.
work_dir = 'work_dirs/demo'
backbones = ['vit_demo_patch8_64']
jobs = 2  # two one-thread stages at a time: on 2 cores, about 1.6x sooner than one two-thread stage at a time

_amp = ['--amp', '{{$VITBENCH_AMP:auto}}']  # mmengine fills in the variable, else 'auto'
# the pre-trained backbones downstream stages start from (None: from scratch)
_init = dict(sup='sup', mae='mae', dmae='dmae', scratch=None)
_downstream = dict(  # the longest first, so the short ones fill the end
    maskrcnn='configs/demo/maskrcnn_demo.py',
    upernet='configs/demo/upernet_demo.py',
    flowers102='configs/demo/transfer_flowers102_demo.py',
    cifar10='configs/demo/transfer_cifar10_demo.py',
)
_make_data = ['tools/make_demo_data.py', '--out', 'data/demo', '--scale', 'small', '--workers', '1', '--datasets']

stages = [
    # a no-op when present; the downstream sets are drawn while the pre-training runs
    dict(name='data', kind='command', argv=_make_data + ['imagenet', 'imagenet_v2', 'imagenet_real', 'imagenet_a',
                                                         'imagenet_r', 'imagenet_sketch', 'imagenet_c']),
    dict(name='data_downstream', kind='command', argv=_make_data + ['ade20k', 'coco', 'cifar10', 'flowers102']),
    dict(name='sup', config='configs/demo/sup_demo.py', depends_on=['data'], outputs=['backbone.pth'], args=_amp),
    # masked image modelling needs a ViT: for another family (--backbones patchconvnet_demo_64) the MAE and dMAE
    # stages, and the downstream stages that start from them, are left out and the pipeline says so
    dict(name='mae', config='configs/demo/mae_demo.py', depends_on=['data'], outputs=['backbone.pth'], args=_amp,
         families=['vit']),
    # seeded like the others: seed k's teacher is seed k's MAE, so a dMAE row's spread includes its teacher's,
    # as when the whole recipe (MAE, then distillation) is run again (seeds='shared' would train one teacher)
    dict(name='dmae', config='configs/demo/dmae_demo.py', depends_on=['data', 'mae'], outputs=['backbone.pth'],
         cfg_options={'model.teacher.checkpoint': '{mae}/backbone.pth'}, args=_amp, families=['vit']),
]
# Which backbones each experiment starts from: all four, but for Mask R-CNN, the demo's costliest experiment (a
# third of its CPU time in four runs), the two whose ordering the demo checks. MAE and distilled MAE on COCO-demo
# showed no ordering over five seeds (docs/demo-signal.md, fifth round: box Δ vs scratch +1.5 [-2.5, +5.4] and
# +1.2 [-7.2, +9.6]), and their two runs were what kept the demo over its 15 minutes (seventh round).
_rows = {task: _init for task in _downstream}
_rows['maskrcnn'] = dict(sup='sup', scratch=None)
stages += [
    dict(name=f'{task}_{init}', config=config, args=_amp,
         depends_on=['data_downstream', source] if source else ['data_downstream'],
         checkpoint='{' + source + '}/backbone.pth' if source else None)
    for task, config in _downstream.items() for init, source in _rows[task].items()
]
# What the papers show and the demo must too; the leaderboard stage fails where it is not (tests/test_demo_signal.py
# shows a pre-training with lr 0 failing it). Thresholds: the least mean paired Δ against scratch, set from the Δ
# measured in every precision the demo runs in (docs/demo-signal.md, sixth round): seeds 0-4 in bf16 on a 2-core AMD
# EPYC (what `make demo` and CI run there, seed 0), seeds 0-4 in float32 on it (`VITBENCH_AMP=off`, what an AVX2 CPU
# runs), and seed 0 on one H200 in bf16 and in float16; below every one of those runs, and about mean - 2 std where
# the spread allows:
# - supervised pre-training ahead on every downstream column (the thesis' DeiT chapter: CIFAR-10 from scratch 97.5
#   against 99.1 from ImageNet, after Table 3.7; why every dense and transfer table it reports starts pre-trained);
# - MAE and distilled MAE ahead on ADE20k-demo (masked pre-training's strength on dense tasks: MAE-lite Table 4,
#   DeiT III thesis Table 6.12).
# ADE20k-demo is the noisiest column (40 UperNet iterations, where the curves are still steep): its thresholds are
# the lowest that every measured run clears, not mean - 2 std.
# Not listed, because the seeds did not show them (issue 17; docs/demo-signal.md, fifth round), and no longer run (the
# time budget; _rows above): MAE and distilled MAE on COCO-demo (box Δ +1.5 [-2.5, +5.4] and +1.2 [-7.2, +9.6] over
# seeds 0-4 at 200 iterations; MAE-lite Table 4 has MAE-Tiny behind supervised DeiT-Tiny on COCO too).
_expected = [
    # Δ: bf16 mean ± std over seeds 0-4 (seed 0's); float32 seeds 0-4 (mean ± std); H200 bf16, fp16 (seed 0; no COCO
    # in bf16)
    dict(row='supervised', over='scratch', min_delta={
        # +4.0 ± 1.9 (+5.9), least +0.9; fp32 +0.63, +3.79, +5.98, +6.81, +1.57 (+3.8 ± 2.7); GPU +3.7, +3.4
        'ADE20k-demo mIoU SS': 0.5,
        # Mask R-CNN at 140 iterations (docs/demo-signal.md, seventh round; scratch runs in float32 in both):
        # +11.4, +6.1, +11.8, +6.4, +9.0 (+8.9 ± 2.7); fp32 +8.0, +7.0, +9.4, +8.4, +6.2 (+7.8 ± 1.2); GPU not
        # measured at 140 (fp16 at 200: +8.3). Was 6 at 200 iterations
        'COCO-demo box AP': 4.0,
        # +13.3, +8.3, +13.5, +8.1, +11.6 (+11.0 ± 2.6); fp32 +11.0, +8.8, +12.9, +12.0, +8.4 (+10.6 ± 2.0); GPU not
        # measured at 140 (fp16 at 200: +9.4). Was 7 at 200 iterations
        'COCO-demo mask AP': 6.0,
        # +32.6 ± 3.7 (+34.5); fp32 +37.6, +34.4, +32.4, +32.7, +32.3 (+33.9 ± 2.2); GPU +35.5, +32.6
        'CIFAR-10 top-1 (full)': 20.0,
        # +10.9 ± 1.2 (+12.2); fp32 +11.6, +11.1, +10.9, +11.6, +13.5 (+11.7 ± 1.0); GPU +8.2, +9.6
        'Flowers-102 top-1 (full)': 7.0,
    }),
    # +4.9 ± 2.9 (+5.0), least +2.2; fp32 +4.85, +3.80, +4.22, +9.86, +2.16 (+5.0 ± 2.9); GPU +1.91, +1.54
    dict(row='mae', over='scratch', min_delta={'ADE20k-demo mIoU SS': 1.0}),
    # +5.6 ± 2.5 (+3.1), least +3.1; fp32 +3.01, +6.03, +6.90, +9.32, +3.84 (+5.8 ± 2.5); GPU bf16 +2.54 (fp16: held
    # at >= 1.5)
    dict(row='dmae', over='scratch', min_delta={'ADE20k-demo mIoU SS': 1.5}),
]
stages.append(dict(name='leaderboard', kind='leaderboard', depends_on=[s['name'] for s in stages],
                   out='{root}/leaderboard', formats=['md', 'html'],  # of the stages above
                   baseline='scratch',  # what pre-training adds: each row against the from-scratch one
                   expect=_expected))
