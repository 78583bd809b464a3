"""Procedural pictures whose labels are really in the pixels: shapes, colours, textures and backgrounds.

Every dataset of the demo draws from here. Class identity is carried by a (shape, hue) pair — never by
position, size or background — while everything else (scale, rotation, position, background, lighting,
texture, occluders) varies per image, so a classifier must learn the object to beat chance.
"""
import math
import zlib

import numpy as np
from PIL import Image, ImageDraw

SHAPES = ('circle', 'square', 'triangle', 'diamond', 'pentagon', 'hexagon', 'star', 'cross', 'ring',
          'crescent')
NUM_HUES = 12  # 30 degrees apart; per-image hue jitter stays well below half of that
CENTRE_COLOURS = np.array([(250, 215, 40), (60, 35, 20), (245, 245, 235)], np.float32)  # yellow, dark, white


def item_rng(seed, *keys):
    """An independent random stream per item: output does not depend on the order items are made in."""
    return np.random.default_rng([seed] + [zlib.crc32(str(k).encode()) for k in keys])


def class_attributes(index, sizes):
    """Maps class ``index`` to one attribute per entry of ``sizes`` (e.g. shape, hue, centre colour).

    A skewed mixed radix: consecutive classes differ in the first two attributes at once (class 1 is not
    "class 0 in the next colour"), and the first ``sizes[0] * sizes[1]`` classes are all distinct because
    ``sizes[0] + 1`` and ``sizes[1]`` are coprime.
    """
    assert math.gcd(sizes[0] + 1, sizes[1]) == 1, sizes
    first, rest = index % sizes[0], index // sizes[0]
    attrs = [first, (rest + index) % sizes[1]]
    rest //= sizes[1]
    for size in sizes[2:]:
        attrs.append(rest % size)
        rest //= size
    assert rest == 0, f'class {index} does not fit attribute sizes {sizes}'
    return tuple(attrs)


def hsv(h, s, v):
    """HSV (h in [0, 1)) to an RGB float array in [0, 255]."""
    i = int(h * 6) % 6
    f = h * 6 - math.floor(h * 6)
    p, q, t = v * (1 - s), v * (1 - f * s), v * (1 - (1 - f) * s)
    rgb = [(v, t, p), (q, v, p), (p, v, t), (p, q, v), (t, p, v), (v, p, q)][i]
    return np.array(rgb, np.float32) * 255


def class_colour(rng, hue_index, num_hues=NUM_HUES):
    """A saturated colour of hue class ``hue_index``, jittered per image (hue by < 1/4 of the spacing)."""
    h = (hue_index + rng.uniform(-0.2, 0.2)) / num_hues
    return hsv(h % 1.0, rng.uniform(0.65, 1.0), rng.uniform(0.7, 1.0))


def dull_colour(rng):
    """A low-saturation colour for backgrounds and occluders, so it never reads as a class colour."""
    return hsv(rng.random(), rng.uniform(0.0, 0.3), rng.uniform(0.25, 0.9))


# ---------------------------------------------------------------------------------------------- geometry
def regular_polygon(n, cx, cy, r, angle=0.0, ry=None):
    t = angle + np.arange(n) * (2 * np.pi / n)
    return np.stack([cx + r * np.cos(t), cy + (ry or r) * np.sin(t)], 1)


def rose(petals, cx, cy, r, angle=0.0, points=96):
    """A flower outline: radius modulated by |cos| gives ``petals`` rounded petals."""
    t = np.arange(points) * (2 * np.pi / points)
    rad = r * (0.35 + 0.65 * np.abs(np.cos(petals * t / 2)))
    return np.stack([cx + rad * np.cos(t + angle), cy + rad * np.sin(t + angle)], 1)


def rotate(points, cx, cy, angle):
    c, s = math.cos(angle), math.sin(angle)
    d = points - (cx, cy)
    return np.stack([cx + c * d[:, 0] - s * d[:, 1], cy + s * d[:, 0] + c * d[:, 1]], 1)


def shape_outline(name, cx, cy, r, angle):
    """(filled polygons, hole polygons) of a named shape of radius ``r``."""
    if name == 'circle':
        return [regular_polygon(40, cx, cy, r)], []
    if name in ('square', 'diamond'):
        return [regular_polygon(4, cx, cy, r, angle + (0 if name == 'diamond' else np.pi / 4))], []
    if name in ('triangle', 'pentagon', 'hexagon'):
        n = {'triangle': 3, 'pentagon': 5, 'hexagon': 6}[name]
        return [regular_polygon(n, cx, cy, r, angle)], []
    if name == 'star':
        pts = regular_polygon(10, cx, cy, r, angle)
        pts[1::2] = (pts[1::2] - (cx, cy)) * 0.45 + (cx, cy)
        return [pts], []
    if name == 'cross':
        a, b = 0.32 * r, r
        xy = np.array([(-a, -b), (a, -b), (a, -a), (b, -a), (b, a), (a, a), (a, b), (-a, b), (-a, a),
                       (-b, a), (-b, -a), (-a, -a)]) + (cx, cy)
        return [rotate(xy, cx, cy, angle)], []
    if name == 'ring':
        return [regular_polygon(40, cx, cy, r)], [regular_polygon(40, cx, cy, 0.55 * r)]
    if name == 'crescent':
        dx, dy = 0.45 * r * math.cos(angle), 0.45 * r * math.sin(angle)
        return [regular_polygon(40, cx, cy, r)], [regular_polygon(40, cx + dx, cy + dy, 0.85 * r)]
    raise ValueError(f'unknown shape {name!r}; expected one of {SHAPES}')


def fill_mask(h, w, polygons, holes=()):
    """Boolean (h, w) mask of the polygons minus the holes (PIL's scan conversion, no anti-aliasing)."""
    im = Image.new('L', (w, h), 0)
    draw = ImageDraw.Draw(im)
    for pts in polygons:
        draw.polygon([tuple(p) for p in np.asarray(pts, np.float64).tolist()], fill=1)
    for pts in holes:
        draw.polygon([tuple(p) for p in np.asarray(pts, np.float64).tolist()], fill=0)
    return np.asarray(im, dtype=bool)


# ---------------------------------------------------------------------------------------------- textures
def smooth_noise(rng, h, w, cells=4, channels=1):
    """Low-frequency noise in [0, 1]: a coarse random grid upsampled bilinearly, (h, w, channels)."""
    grid = rng.random((channels, cells, cells), dtype=np.float32)
    # PIL rather than cv2: single-threaded, so safe in forked worker processes whatever the parent did.
    return np.stack([np.asarray(Image.fromarray(g).resize((w, h), Image.BILINEAR)) for g in grid], -1)


def pattern(rng, h, w, kind, scale=1.0):
    """A multiplicative brightness pattern around 1 ('plain', 'stripes', 'dots', 'checker', 'noise')."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    period = rng.uniform(4, 9) * scale
    if kind == 'plain':
        out = np.ones((h, w), np.float32)
    elif kind == 'stripes':
        t = rng.uniform(0, np.pi)
        out = 1 + 0.25 * np.sign(np.sin((xx * math.cos(t) + yy * math.sin(t)) * (2 * np.pi / period)))
    elif kind == 'dots':
        d = np.hypot((xx % period) - period / 2, (yy % period) - period / 2)
        out = np.where(d < period / 4, 0.7, 1.05).astype(np.float32)
    elif kind == 'checker':
        out = 1 + 0.2 * (((xx // period) + (yy // period)) % 2 * 2 - 1)
    elif kind == 'noise':
        out = 0.8 + 0.4 * smooth_noise(rng, h, w, cells=max(2, int(min(h, w) / period)))[..., 0]
    else:
        raise ValueError(f'unknown pattern {kind!r}')
    return out.astype(np.float32)


PATTERNS = ('plain', 'stripes', 'dots', 'checker', 'noise')


def background(rng, h, w):
    """A dull, varied backdrop: a two-colour gradient with soft noise and sometimes faint stripes."""
    c0, c1 = dull_colour(rng), dull_colour(rng)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    t = rng.uniform(0, 2 * np.pi)
    g = (xx * math.cos(t) + yy * math.sin(t)) / max(h, w)
    g = ((g - g.min()) / max(float(np.ptp(g)), 1e-6))[..., None]
    img = c0 * (1 - g) + c1 * g
    img *= 0.75 + 0.5 * smooth_noise(rng, h, w, cells=int(rng.integers(2, 6)), channels=3)
    if rng.random() < 0.3:
        img *= pattern(rng, h, w, 'stripes', scale=2.0)[..., None] * 0.5 + 0.5
    return img


def paint(img, mask, colour, shade=None):
    """Writes ``colour`` (times an optional (h, w) shade pattern) into ``img`` where ``mask`` is set."""
    if shade is None:
        img[mask] = colour
    else:
        img[mask] = colour * shade[mask][:, None]


def add_noise(rng, img, sigma=4.0):
    img += rng.standard_normal(img.shape, dtype=np.float32) * sigma
    return img


def to_uint8(img):
    return np.clip(img + 0.5, 0, 255).astype(np.uint8)


# ------------------------------------------------------------------------------------ one object per image
def object_image(rng, h, w, shape, hue, num_hues=NUM_HUES, centre=None, fill=(0.35, 0.8), occlude=True):
    """An image of one object of class (shape, hue) on a random backdrop, and the object's mask.

    ``shape`` is a name from SHAPES or ('rose', petals). ``centre`` optionally adds a disc of a fixed
    colour in the middle (a third class attribute, used for flowers). ``fill`` is the range of the object's
    diameter relative to the image's short side. Occluders are dull, so the class evidence stays visible.
    """
    img = background(rng, h, w)
    r = 0.5 * min(h, w) * rng.uniform(*fill)
    cx, cy = rng.uniform(r * 0.8, w - r * 0.8), rng.uniform(r * 0.8, h - r * 0.8)
    angle = rng.uniform(0, 2 * np.pi)
    if isinstance(shape, tuple):
        polys, holes = [rose(shape[1], cx, cy, r, angle)], []
    else:
        polys, holes = shape_outline(shape, cx, cy, r, angle)
    mask = fill_mask(h, w, polys, holes)
    kind = PATTERNS[rng.integers(len(PATTERNS))]
    paint(img, mask, class_colour(rng, hue, num_hues), pattern(rng, h, w, kind, scale=max(r / 12, 0.5)))
    if centre is not None:
        disc = fill_mask(h, w, [regular_polygon(24, cx, cy, 0.25 * r)])
        paint(img, disc, CENTRE_COLOURS[centre] * rng.uniform(0.8, 1.0))
        mask |= disc
    if occlude:
        for _ in range(rng.integers(0, 3)):
            ro = r * rng.uniform(0.15, 0.4)
            ox, oy = cx + rng.uniform(-1.2, 1.2) * r, cy + rng.uniform(-1.2, 1.2) * r
            occ = fill_mask(h, w, [regular_polygon(int(rng.integers(3, 8)), ox, oy, ro, rng.uniform(0, 6))])
            paint(img, occ, dull_colour(rng))
            mask &= ~occ
    img *= rng.uniform(0.8, 1.15)  # global lighting
    return to_uint8(add_noise(rng, img, rng.uniform(2, 6))), mask


def random_size(rng, short, aspect=(0.75, 1.34)):
    """(h, w) with the given short side and a random aspect ratio, as real photos vary."""
    a = rng.uniform(*aspect)
    return (short, int(round(short * a))) if a >= 1 else (int(round(short / a)), short)
