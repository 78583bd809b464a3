"""The visual tokenizers whose tokens BEiT's masked image modelling predicts (Bao et al., ICLR 2022, §2.1.2): a
tokenizer maps the tokenizer view of an image (BEiT: the same crop at 112 px) to one token of a vocabulary per
patch position, on the same grid as the ViT's patches (112 / 8 = 224 / 16 = 14).

Two tokenizers, both registered in the ``vitbench`` MODELS scope and both taking the tokenizer view normalised as
BEiT's patch view is, (x / 255 - 0.5) / 0.5 (BEiT's Inception mean and std; the data preprocessor does it):

* :class:`DALLETokenizer`: the DALL-E dVAE encoder BEiT uses (openai/DALL-E ``dall_e/encoder.py``: a 7x7 input
  conv, 4 groups of 2 residual blocks, max-pooling after the first three, a ReLU and 1x1 conv to 8192 logits;
  BEiT takes the argmax, ``get_codebook_indices``), with the official parameter names (``blocks.input.w``,
  ``blocks.group_1.block_1.res_path.conv_1.w``, ..., ``blocks.output.conv.w``), so that the official weights load
  as a state dict. Its weights were trained by OpenAI on 250M private images and are not part of the suite: the
  user gives them (``checkpoint``), converted once from the released ``encoder.pkl`` (a pickled module of the
  ``dall_e`` package) with ``torch.save(torch.load('encoder.pkl').state_dict(), 'dall_e_encoder.pth')``.
* :class:`KMeansTokenizer`: what the suite builds itself, for the demo and for users without those weights: a
  k-means codebook of the tokenizer view's patches (pixels as normalised above, flattened in (row, column,
  channel) order), fitted on the training set by ``tools/beit_tokenizer.py`` (k-means++ seeding and Lloyd
  iterations, deterministic given the seed) and saved as a file; a patch's token is its nearest centroid. It
  is a far weaker tokenizer than a dVAE (no learned features, no context): "Three things" Table 7 retrains
  BEiT's dVAE on ImageNet-1k, which this is not. Runs record which tokenizer they used (``tag``, written into
  ``experiment.pretrain.tokenizer``), so that they never share a leaderboard cell.
"""
import math
import os.path as osp
from collections import OrderedDict
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from vitbench.registry import MODELS

from .mae import patchify

LOGIT_LAPLACE_EPS = 0.1  # DALL-E's map_pixels: x in [0, 1] -> (1 - 2 eps) x + eps


class _Conv(nn.Module):
    """DALL-E's ``Conv2d``: parameters ``w`` (out, in, k, k) and ``b``, 'same' padding, odd kernel."""

    def __init__(self, n_in: int, n_out: int, kw: int):
        super().__init__()
        self.w = nn.Parameter(torch.empty(n_out, n_in, kw, kw).normal_(std=1 / math.sqrt(n_in * kw ** 2)))
        self.b = nn.Parameter(torch.zeros(n_out))
        self.kw = kw

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.conv2d(x, self.w, self.b, padding=(self.kw - 1) // 2)


class _EncoderBlock(nn.Module):
    """Residual block: id_path (1x1 conv where the width changes) + post_gain * (4 x (ReLU, conv 3-3-3-1))."""

    def __init__(self, n_in: int, n_out: int, n_layers: int):
        super().__init__()
        n_hid = n_out // 4
        self.post_gain = 1 / n_layers ** 2
        self.id_path = _Conv(n_in, n_out, 1) if n_in != n_out else nn.Identity()
        self.res_path = nn.Sequential(OrderedDict([
            ('relu_1', nn.ReLU()), ('conv_1', _Conv(n_in, n_hid, 3)),
            ('relu_2', nn.ReLU()), ('conv_2', _Conv(n_hid, n_hid, 3)),
            ('relu_3', nn.ReLU()), ('conv_3', _Conv(n_hid, n_hid, 3)),
            ('relu_4', nn.ReLU()), ('conv_4', _Conv(n_hid, n_out, 1))]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.id_path(x) + self.post_gain * self.res_path(x)


def _load_state(path: Optional[str], who: str, how: str) -> dict:
    """The tensors of a tokenizer file, or one line naming the file and what was expected."""
    if not path:
        raise ValueError(f'{who}: give checkpoint=<path> ({how})')
    if not osp.isfile(path):
        raise FileNotFoundError(f'{who}: checkpoint {path!r} does not exist ({how})')
    try:
        state = torch.load(path, map_location='cpu', weights_only=True)
    except Exception as e:  # a pickled module (DALL-E's encoder.pkl) or a broken file
        raise ValueError(f'{who}: {path!r} is not a state dict of tensors ({type(e).__name__}; {how})') from None
    return state.get('state_dict', state) if isinstance(state, dict) else state


@MODELS.register_module()
class DALLETokenizer(nn.Module):
    """DALL-E's dVAE encoder (``n_hid`` 256, 2 blocks per group, ``vocab_size`` 8192): a tokenizer-view image of
    side S gives an (S / 8)^2 grid of tokens. ``checkpoint``: the encoder's state dict (required; see the
    module docstring for the conversion). Frozen: BEiT never trains its tokenizer."""
    downsample = 8

    def __init__(self, checkpoint: Optional[str] = None, n_hid: int = 256, n_blk_per_group: int = 2,
                 vocab_size: int = 8192, load: bool = True):
        super().__init__()
        self.vocab_size = vocab_size
        n_layers = 4 * n_blk_per_group
        groups = []
        widths = [n_hid, n_hid, 2 * n_hid, 4 * n_hid, 8 * n_hid]  # input conv, then the four groups' outputs
        for g in range(4):
            layers = [(f'block_{i + 1}', _EncoderBlock(widths[g] if i == 0 else widths[g + 1], widths[g + 1], n_layers))
                      for i in range(n_blk_per_group)]
            if g < 3:
                layers.append(('pool', nn.MaxPool2d(kernel_size=2)))
            groups.append((f'group_{g + 1}', nn.Sequential(OrderedDict(layers))))
        self.blocks = nn.Sequential(OrderedDict([
            ('input', _Conv(3, n_hid, 7)), *groups,
            ('output', nn.Sequential(OrderedDict([('relu', nn.ReLU()), ('conv', _Conv(8 * n_hid, vocab_size, 1))])))]))
        if load:  # load=False: the architecture alone (tests, parameter counts)
            how = ("the DALL-E encoder's state dict: torch.save(torch.load('encoder.pkl').state_dict(), path) with "
                   "openai's dall_e package; or model.tokenizer=dict(type='KMeansTokenizer', ...), the suite's own")
            state = _load_state(checkpoint, 'DALLETokenizer', how)
            missing, unexpected = self.load_state_dict(state, strict=False)
            if missing or unexpected:
                raise ValueError(f'DALLETokenizer: {checkpoint!r} is not a DALL-E encoder of this size: missing '
                                 f'{sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]}')
        self.requires_grad_(False)
        self.tag = f'dall-e-{vocab_size}'

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """(B, 3, S, S) normalised tokenizer views -> (B, vocab, S/8, S/8) logits."""
        pixels = images.float() * 0.5 + 0.5  # back to [0, 1], then DALL-E's map_pixels
        return self.blocks((1 - 2 * LOGIT_LAPLACE_EPS) * pixels + LOGIT_LAPLACE_EPS)

    @torch.no_grad()
    def tokens(self, images: torch.Tensor) -> torch.Tensor:
        """(B, 3, S, S) -> (B, S/8, S/8) token ids (the argmax of the logits)."""
        return self(images).argmax(dim=1)


def nearest(points: torch.Tensor, codebook: torch.Tensor, chunk: int = 65536) -> torch.Tensor:
    """The index of each point's nearest centroid (squared Euclidean distance; ties: the lowest index)."""
    out = []
    sq = codebook.pow(2).sum(1)
    for part in points.split(chunk):
        out.append((sq[None] - 2 * part @ codebook.T).argmin(dim=1))  # |x|^2 is the same for every centroid
    return torch.cat(out) if out else torch.empty(0, dtype=torch.long)


def fit_kmeans(points: torch.Tensor, k: int, seed: int = 0, iters: int = 50) -> torch.Tensor:
    """A (k, D) codebook of ``points`` (N, D): k-means++ seeding (Arthur & Vassilvitskii 2007) from a
    ``torch.Generator`` seeded with ``seed``, then Lloyd iterations until no assignment changes (at most
    ``iters``); an empty cluster is given the point farthest from its centroid. Float64 on the CPU:
    deterministic given the points and the seed."""
    points = points.double().cpu()
    n = points.shape[0]
    if n < k:
        raise ValueError(f'k-means: {n} patches for a vocabulary of {k}: fit on more images or a smaller vocab_size')
    gen = torch.Generator().manual_seed(seed)
    centres = [points[torch.randint(n, (1,), generator=gen)].squeeze(0)]
    dist = (points - centres[0]).pow(2).sum(1)
    for _ in range(1, k):
        total = dist.sum()
        pick = torch.multinomial(dist / total, 1, generator=gen) if total > 0 else torch.randint(n, (1,), generator=gen)
        centres.append(points[pick].squeeze(0))
        dist = torch.minimum(dist, (points - centres[-1]).pow(2).sum(1))
    codebook = torch.stack(centres)
    assign = nearest(points, codebook)
    for _ in range(iters):
        sums = torch.zeros_like(codebook).index_add_(0, assign, points)
        counts = torch.bincount(assign, minlength=k)
        codebook = torch.where(counts[:, None] > 0, sums / counts.clamp(min=1)[:, None].double(), codebook)
        for empty in (counts == 0).nonzero().flatten().tolist():
            far = (points - codebook[assign]).pow(2).sum(1).argmax()
            codebook[empty] = points[far]
        new = nearest(points, codebook)
        if torch.equal(new, assign):
            break
        assign = new
    return codebook.float()


@MODELS.register_module()
class KMeansTokenizer(nn.Module):
    """The suite's tokenizer: a k-means codebook of tokenizer-view patches (``tools/beit_tokenizer.py`` fits
    and saves it). ``checkpoint``: that file (``codebook`` (vocab, p * p * 3), ``patch_size`` p, ``seed``);
    ``vocab_size``, ``seed``, ``max_images``: how the tool fits it (the file must agree on the first two)."""

    def __init__(self, checkpoint: Optional[str] = None, vocab_size: Optional[int] = None, seed: int = 0,
                 max_images: Optional[int] = None):
        super().__init__()
        how = 'fit one on the training set first: python tools/beit_tokenizer.py CONFIG (it writes this file)'
        state = _load_state(checkpoint, 'KMeansTokenizer', how)
        if not isinstance(state, dict) or not isinstance(state.get('codebook'), torch.Tensor) or \
                state['codebook'].dim() != 2 or 'patch_size' not in state:
            raise ValueError(f"KMeansTokenizer: {checkpoint!r} lacks 'codebook' (vocab, p*p*3) and 'patch_size' "
                             '(tools/beit_tokenizer.py writes them)')
        self.register_buffer('codebook', state['codebook'].float(), persistent=False)
        self.patch_size = int(state['patch_size'])
        if self.codebook.shape[1] != 3 * self.patch_size ** 2:
            raise ValueError(f'KMeansTokenizer: {checkpoint!r}: codebook rows of {self.codebook.shape[1]} values for '
                             f'{self.patch_size}x{self.patch_size} RGB patches ({3 * self.patch_size ** 2})')
        self.vocab_size = self.codebook.shape[0]
        for key, want, got in (('vocab_size', vocab_size, self.vocab_size), ('seed', seed, state.get('seed'))):
            if want is not None and got is not None and int(want) != int(got):
                raise ValueError(f'KMeansTokenizer: {checkpoint!r} was fitted with {key}={int(got)}, the config says '
                                 f'{want}: fit it again (tools/beit_tokenizer.py) or give another file')
        self.downsample = self.patch_size
        self.tag = f'kmeans-{self.vocab_size}'

    @torch.no_grad()
    def tokens(self, images: torch.Tensor) -> torch.Tensor:
        """(B, 3, S, S) normalised tokenizer views -> (B, S/p, S/p) token ids (nearest centroid)."""
        B, _, H, W = images.shape
        p = self.patch_size
        ids = nearest(patchify(images.float(), p).flatten(0, 1), self.codebook.to(images.device))
        return ids.view(B, H // p, W // p)


def save_codebook(path: str, codebook: torch.Tensor, patch_size: int, seed: int, images: int) -> None:
    """The file :class:`KMeansTokenizer` reads (a state dict of tensors and ints: weights-only loadable)."""
    import os
    os.makedirs(osp.dirname(osp.abspath(path)), exist_ok=True)
    torch.save(dict(codebook=codebook.float().contiguous(), patch_size=int(patch_size), seed=int(seed),
                    images=int(images)), path)
