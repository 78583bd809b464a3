"""The arguments of the ViT family's constructor that exclude each other (backbones/vit.py): each refused in one line
naming the argument, before anything is built."""


def check_vit_options(*, global_pool, class_token, distilled, num_parallel, rel_pos_bias, use_rel_pos, window_size,
                      stem, stems, stem_act, depth, cls_insert_layer, depth_token_only, attn_layer,
                      attn_layers) -> None:
    if global_pool not in ('token', 'avg', ''):
        raise ValueError(f"global_pool must be 'token', 'avg' or '', got {global_pool!r}")
    if global_pool == 'token' and not class_token:
        raise ValueError("global_pool='token' needs the class token (class_token=True)")
    if distilled and (not class_token or global_pool == 'avg'):
        raise ValueError("a distilled model reads the class and distillation tokens: "
                         "it needs class_token=True and global_pool='token' (or '' for dense use)")
    if num_parallel < 1:
        raise ValueError(f'num_parallel must be >= 1, got {num_parallel}')
    if rel_pos_bias and (use_rel_pos or window_size):
        raise ValueError("rel_pos_bias (BEiT's) is for global attention without ViTDet's use_rel_pos: set one "
                         'of them, and window_size=0 with rel_pos_bias')
    if stem not in stems:
        raise ValueError(f"stem must be one of {stems}, got {stem!r}")
    if stem_act and stem != 'linear':
        raise ValueError(f"stem_act=True (GELU after the projection) is an option of stem='linear', not {stem!r}")
    _check_class_token_options(depth, class_token, distilled, global_pool, num_parallel, cls_insert_layer,
                               depth_token_only)
    if attn_layer not in attn_layers:
        raise ValueError(f'attn_layer must be one of {attn_layers}, got {attn_layer!r}')
    if attn_layer != 'standard' and (window_size or use_rel_pos):
        raise ValueError(f"attn_layer={attn_layer!r} attends globally: no window_size, no use_rel_pos")


def _check_class_token_options(depth, class_token, distilled, global_pool, num_parallel, cls_insert_layer,
                               depth_token_only):
    """The late class token and the class-attention stage (CaiT Table 2): one line naming the argument."""
    if cls_insert_layer and depth_token_only:
        raise ValueError('cls_insert_layer and depth_token_only: a class-attention stage inserts the class token '
                         'after the last block; set one of them')
    if not 0 <= cls_insert_layer < max(depth, 1):
        raise ValueError(f'cls_insert_layer must be in [0, depth - 1] = [0, {depth - 1}] (the class token needs a '
                         f'block to join; depth_token_only > 0 for a class-attention stage), got {cls_insert_layer}')
    if depth_token_only < 0:
        raise ValueError(f'depth_token_only must be >= 0, got {depth_token_only}')
    if (cls_insert_layer or depth_token_only) and not class_token:
        raise ValueError('cls_insert_layer / depth_token_only place the class token: they need class_token=True')
    if (cls_insert_layer or depth_token_only) and num_parallel != 1:
        raise ValueError('cls_insert_layer / depth_token_only need sequential blocks (num_parallel=1)')
    if depth_token_only and distilled:
        raise ValueError('depth_token_only: the class-attention stage updates the class token alone; '
                         'a distilled model (distillation token) has no class-attention form here')
