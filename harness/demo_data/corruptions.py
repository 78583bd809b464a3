"""Eight of ImageNet-C's corruptions in numpy / PIL / scipy, for the demo ImageNet-C: the ones that need neither
ImageMagick nor the frost pictures of the original code.

Severity parameters are those of Hendrycks & Dietterich's ``imagenet_c/corruptions.py`` (hendrycks/robustness,
ImageNet-C/imagenet_c), which corrupts 224 x 224 images. The demo's pictures are smaller, so lengths in pixels
(defocus_blur's disk radius) are scaled by side / 224, keeping a severity's strength relative to the picture;
pixelate's factor is already relative. Each function takes a uint8 (h, w, 3) array, the severity (1-5) and a
numpy Generator, and returns a uint8 array of the same shape; like the original, float results are clipped to
[0, 255] and truncated to uint8.
"""
import io

import numpy as np
from PIL import Image
from scipy import ndimage

REFERENCE_SIDE = 224  # the side of the images the original parameters are for
# severity 1..5 -> parameter, as in imagenet_c/corruptions.py
PARAMETERS = {
    'gaussian_noise': (0.08, 0.12, 0.18, 0.26, 0.38),  # noise standard deviation (image in [0, 1])
    'shot_noise': (60, 25, 12, 5, 3),  # Poisson rate per unit intensity
    'impulse_noise': (0.03, 0.06, 0.09, 0.17, 0.27),  # share of salt-and-pepper values
    'defocus_blur': ((3, 0.1), (4, 0.5), (6, 0.5), (8, 0.5), (10, 0.5)),  # disk radius (px at 224), anti-alias sigma
    'brightness': (0.1, 0.2, 0.3, 0.4, 0.5),  # added to HSV value
    'contrast': (0.4, 0.3, 0.2, 0.1, 0.05),  # factor on the distance to the channel mean
    'pixelate': (0.6, 0.5, 0.4, 0.3, 0.25),  # downscale factor (box filter both ways)
    'jpeg_compression': (25, 18, 15, 10, 7),  # JPEG quality
}


def _to_uint8(x: np.ndarray) -> np.ndarray:
    """[0, 1] floats -> uint8 as the original code writes them: clip, scale, truncate."""
    return np.uint8(np.clip(x, 0, 1) * 255)


def gaussian_noise(img, severity, rng):
    x = img / 255.0
    return _to_uint8(x + rng.normal(size=x.shape, scale=PARAMETERS['gaussian_noise'][severity - 1]))


def shot_noise(img, severity, rng):
    c = PARAMETERS['shot_noise'][severity - 1]
    return _to_uint8(rng.poisson(img / 255.0 * c) / c)


def impulse_noise(img, severity, rng):
    """skimage's random_noise(mode='s&p', amount=c): a share c of the values become 0 or 1, half each."""
    x = img / 255.0
    hit = rng.random(x.shape) < PARAMETERS['impulse_noise'][severity - 1]
    salt = rng.random(x.shape) < 0.5
    x[hit & salt], x[hit & ~salt] = 1.0, 0.0
    return _to_uint8(x)


def _gaussian_kernel_3x3(sigma: float) -> np.ndarray:
    g = np.exp(-np.arange(-1, 2) ** 2 / (2 * sigma ** 2))
    g /= g.sum()
    return np.outer(g, g)


def disk(radius: float, alias_blur: float) -> np.ndarray:
    """The original's defocus kernel: a filled disk on a grid of at least 17 x 17, normalised, then smoothed by a
    3 x 3 Gaussian of sigma ``alias_blur`` against aliasing (cv2.GaussianBlur with reflect-101 borders)."""
    half = max(8, int(np.ceil(radius)))
    grid = np.arange(-half, half + 1)
    x, y = np.meshgrid(grid, grid)
    kernel = (x ** 2 + y ** 2 <= radius ** 2).astype(np.float64)
    kernel /= kernel.sum()
    return ndimage.correlate(kernel, _gaussian_kernel_3x3(alias_blur), mode='mirror')


def defocus_blur(img, severity, rng):
    radius, alias_blur = PARAMETERS['defocus_blur'][severity - 1]
    kernel = disk(radius * min(img.shape[:2]) / REFERENCE_SIDE, alias_blur)
    x = img / 255.0
    return _to_uint8(np.stack([ndimage.correlate(x[..., d], kernel, mode='mirror') for d in range(3)], axis=-1))


def brightness(img, severity, rng):
    """HSV value + c, clipped: hue and saturation kept, so each pixel's RGB scales by new value / old value (a
    black pixel, of no hue, becomes grey)."""
    x = img / 255.0
    value = x.max(axis=-1, keepdims=True)
    brighter = np.clip(value + PARAMETERS['brightness'][severity - 1], 0, 1)
    scaled = np.divide(x * brighter, value, out=np.repeat(brighter, 3, axis=-1), where=value > 0)
    return _to_uint8(scaled)


def contrast(img, severity, rng):
    x = img / 255.0
    means = x.mean(axis=(0, 1), keepdims=True)
    return _to_uint8((x - means) * PARAMETERS['contrast'][severity - 1] + means)


def pixelate(img, severity, rng):
    c = PARAMETERS['pixelate'][severity - 1]
    h, w = img.shape[:2]
    small = Image.fromarray(img).resize((max(1, int(w * c)), max(1, int(h * c))), Image.BOX)
    return np.asarray(small.resize((w, h), Image.BOX))


def jpeg_compression(img, severity, rng):
    buffer = io.BytesIO()
    Image.fromarray(img).save(buffer, format='JPEG', quality=PARAMETERS['jpeg_compression'][severity - 1])
    with Image.open(buffer) as compressed:
        return np.asarray(compressed.convert('RGB'))


CORRUPT = {name: globals()[name] for name in PARAMETERS}  # name -> function(img, severity, rng)
