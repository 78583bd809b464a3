# "DeiT-Tiny", MAE-lite's supervised baseline (Wang et al., ICML 2023, §3 "Compared methods"): the 12-head ViT-Tiny
# trained from scratch on ImageNet-1k for 300 epochs with DeiT's recipe and MAE-lite's changes to its augmentation
# (the "impr." recipe, Appendix A.1, not in the extracted text): 75.8 top-1 (Table 1, "from scratch, impr."), the
# supervised row of Tables 4 and 5. Official: playground/mae_lite/finetuning_impr_exp.py run without pre-trained
# weights (README "Main Results", first rows: 74.5 with the DeiT recipe, deit_tiny12h_in1k_300e_ori.py; 75.8 with
# this one), i.e. configs/finetune/mae_lite_vit_tiny12h_ft_300e.py from random weights: AdamW (0.9, 0.999)
# 1e-3 x 1024 / 256 = 4e-3 at batch 1024, weight decay 0.05, 5 warm-up epochs, cosine to 1e-6, layer-wise decay
# 0.85 (the official optimizer applies it whether or not weights are loaded), global average pooling + fc_norm,
# RandAugment m10/0.5, Mixup 0.2, no CutMix / label smoothing / erasing / drop path.
# Its backbone.pth feeds the transfer, Mask R-CNN and UperNet configs of configs/pipelines/paper_maelite.py.
_base_ = ['../finetune/mae_lite_vit_tiny12h_ft_300e.py']

model = dict(backbone=dict(init_cfg=None))
experiment = dict(task='pretrain', pretrain=dict(recipe='supervised', epochs=300, checkpoint=None))
