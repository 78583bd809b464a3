# UperNet on PatchConvNet (thesis §5.3.3, Table 5.3): "as our approach is not pyramidal we only use the final
# output of our network at different levels in UPerNet": the trunk's last map (stride 16) feeds all four
# levels, rescaled 4x / 2x / 1x / 0.5x by Feature2Pyramid as for the plain ViTs (upernet_vit.py, whose neck,
# heads and test protocol this keeps). The attention-based pooling is a classifier and is not built.
# 512 decoder channels whatever the width: Table 5.3's parameter counts are those of 512-channel UperNets
# (S60: 57.1M = the 25.2M classifier + a 512-channel UperNet on 384-wide maps). Widths here are S60's.
_base_ = ['./upernet_vit.py']
model = dict(
    backbone=dict(
        _delete_=True,
        type='vitbench.PatchConvNet',
        arch='patchconvnet_s60',
        out_indices=[59, 59, 59, 59],
        final_norm=False,  # the raw trunk, as the ViTs' raw blocks; the neck and heads normalise
        drop_path_rate=0.05),
    neck=dict(embed_dim=384),
    decode_head=dict(in_channels=[384, 384, 384, 384], channels=512),
    auxiliary_head=dict(in_channels=384))
