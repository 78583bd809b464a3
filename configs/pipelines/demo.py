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
# measured in both precisions the demo runs in on CPU (docs/demo-signal.md, eighth round, with today's schedules):
# seeds 0-4 in bf16 on a 2-core AMD EPYC (what `make demo` and CI run there, seed 0) and seeds 0-4 in float32 on it
# (`VITBENCH_AMP=off`, what an AVX2 CPU runs); below every one of those runs, and about mean - 2 std where the spread
# allows. (The H200's seed 0, sixth round, predates these schedules: bf16 / fp16 then gave supervised +35.5 / +32.6
# on CIFAR-10, +8.2 / +9.6 on Flowers-102, MAE +1.9 / +1.5 and distilled MAE +2.5 on ADE20k-demo.)
# - supervised pre-training ahead on COCO-demo and the two transfers (the thesis' DeiT chapter: CIFAR-10 from scratch
#   97.5 against 99.1 from ImageNet, after Table 3.7; why every dense and transfer table it reports starts
#   pre-trained);
# - MAE and distilled MAE ahead on ADE20k-demo (masked pre-training's strength on dense tasks: MAE-lite Table 4,
#   DeiT III thesis Table 6.12).
# ADE20k-demo is the noisiest column (40 UperNet iterations, where the curves are still steep): its thresholds are
# the lowest that every measured run clears, not mean - 2 std.
# Not listed, because the seeds did not show them in every run:
# - supervised on ADE20k-demo: +2.8, +4.2, +6.2, +4.1, +2.0 (+3.9 ± 1.6); fp32 +5.9, +4.8, +7.1, +1.7, -0.6
#   (+3.8 ± 3.2). Ahead on average, as with 40 epochs (fp32 then +3.8 ± 2.7, least +0.63), but behind in one run of
#   ten: 40 UperNet iterations cannot show it for every seed. The board still shows its Δ and interval;
# - MAE and distilled MAE on COCO-demo, no longer run (the time budget; _rows above): box Δ +1.5 [-2.5, +5.4] and
#   +1.2 [-7.2, +9.6] over seeds 0-4 at 200 iterations (issue 17; docs/demo-signal.md, fifth round); MAE-lite
#   Table 4 has MAE-Tiny behind supervised DeiT-Tiny on COCO too.
_expected = [
    # Δ over seeds 0-4 (25 supervised, 8 MAE epochs; Mask R-CNN 140 iterations): bf16 runs (mean ± std); float32 runs
    # (mean ± std). Mask R-CNN trains in float32 in both (scratch: the same five runs)
    dict(row='supervised', over='scratch', min_delta={
        # +6.9, +5.3, +7.9, +10.6, +10.1 (+8.2 ± 2.2); fp32 +6.5, +8.7, +9.5, +13.7, +11.8 (+10.0 ± 2.8)
        'COCO-demo box AP · maskrcnn_demo': 4.0,
        # +7.7, +7.3, +10.4, +12.1, +10.5 (+9.6 ± 2.0); fp32 +5.9, +9.5, +9.1, +14.6, +12.0 (+10.2 ± 3.3). Was 6
        # with 40 supervised epochs
        'COCO-demo mask AP · maskrcnn_demo': 5.0,
        # +35.4, +30.5, +26.8, +28.4, +31.1 (+30.4 ± 3.3); fp32 +35.5, +31.1, +27.3, +31.3, +26.7 (+30.4 ± 3.6)
        'CIFAR-10 top-1 (full) · transfer_deit': 20.0,
        # +11.2, +8.6, +11.1, +8.7, +9.7 (+9.9 ± 1.2); fp32 +8.9, +10.5, +9.8, +7.3, +12.4 (+9.8 ± 1.9). Was 7 with
        # 40 supervised epochs
        'Flowers-102 top-1 (full) · transfer_maelite': 6.0,
    }),
    # +4.2, +3.4, +8.2, +9.5, +2.6 (+5.6 ± 3.1); fp32 +4.3, +3.4, +8.1, +9.6, +2.7 (+5.6 ± 3.0)
    dict(row='mae', over='scratch', min_delta={'ADE20k-demo mIoU SS · upernet_demo': 1.0}),
    # +4.5, +6.6, +8.6, +7.9, +4.9 (+6.5 ± 1.8); fp32 +4.6, +6.6, +8.5, +8.2, +4.7 (+6.5 ± 1.8)
    dict(row='dmae', over='scratch', min_delta={'ADE20k-demo mIoU SS · upernet_demo': 1.5}),
]
stages.append(dict(name='leaderboard', kind='leaderboard', depends_on=[s['name'] for s in stages],
                   out='{root}/leaderboard', formats=['md', 'html'],  # of the stages above
                   baseline='scratch',  # what pre-training adds: each row against the from-scratch one
                   expect=_expected))
