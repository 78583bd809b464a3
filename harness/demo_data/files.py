"""Byte-deterministic writers for the file formats the real datasets ship in.

Same input -> same bytes: JPEG at a fixed quality, PNG without timestamps, JSON in insertion order,
MATLAB files with a fixed header (scipy stamps the creation time into it) and pickles written the way
Python 2's cPickle wrote CIFAR (so both the official ``encoding='bytes'`` recipe and torchvision's
``encoding='latin1'`` read the same keys as from the original files).
"""
import io
import json
import os
import pickle
import struct

import numpy as np
import scipy.io
from PIL import Image

from vitbench.compat.python import PurePythonPickler

JPEG_QUALITY = 90


def makedirs_for(path):
    os.makedirs(os.path.dirname(path), exist_ok=True)


def save_jpg(path, rgb):
    makedirs_for(path)
    Image.fromarray(rgb).save(path, format='JPEG', quality=JPEG_QUALITY)


def save_png(path, array):
    """A uint8 (h, w) array as an 8-bit greyscale ('L') PNG, the mode ADE20k and Pets label maps use."""
    assert array.dtype == np.uint8 and array.ndim == 2, (array.dtype, array.shape)
    makedirs_for(path)
    Image.fromarray(array).save(path, format='PNG')  # uint8 (h, w) is mode L


def save_json(path, obj):
    makedirs_for(path)
    with open(path, 'w') as f:
        json.dump(obj, f, separators=(',', ':'))


def save_text(path, lines):
    makedirs_for(path)
    with open(path, 'w') as f:
        f.write(''.join(line + '\n' for line in lines))


_MAT_HEADER = b'MATLAB 5.0 MAT-file, Platform: GLNXA64, written by vitbench tools/make_demo_data.py'


def save_mat(path, variables):
    """A MATLAB 5 .mat file (what scipy.io.loadmat and MATLAB read), with a timestamp-free header."""
    buf = io.BytesIO()
    scipy.io.savemat(buf, variables, format='5', oned_as='row')
    data = bytearray(buf.getvalue())
    data[:116] = _MAT_HEADER.ljust(116)  # the 116-byte text field; scipy writes time.asctime() there
    makedirs_for(path)
    with open(path, 'wb') as f:
        f.write(bytes(data))


def mat_struct_array(records):
    """A 1 x N MATLAB struct array (e.g. Stanford Cars' ``annotations``) from a list of equal-keyed dicts."""
    fields = list(records[0])
    out = np.empty((1, len(records)), dtype=[(k, object) for k in fields])
    for i, rec in enumerate(records):
        out[0, i] = tuple(rec[k] for k in fields)
    return out


def mat_cell_row(strings):
    """A 1 x N MATLAB cell array of strings (e.g. Stanford Cars' ``class_names``)."""
    out = np.empty((1, len(strings)), dtype=object)
    out[0, :] = list(strings)
    return out


_NUMPY_RECONSTRUCT = np.zeros(0).__reduce__()[0]  # numpy._core... in numpy 2, numpy.core... in 1.x


class _Py2Pickler(PurePythonPickler):
    """Protocol 2 as Python 2 wrote it: ``bytes`` become py2 ``str`` (BINSTRING), not ``_codecs.encode``
    calls, and arrays reference ``numpy.core.multiarray`` (readable by numpy 1.x and 2.x alike)."""

    dispatch = PurePythonPickler.dispatch.copy()

    def save_py2_str(self, obj):
        n = len(obj)
        if n < 256:
            self.write(pickle.SHORT_BINSTRING + bytes([n]) + obj)
        else:
            self.write(pickle.BINSTRING + struct.pack('<i', n) + obj)
        self.memoize(obj)

    dispatch[bytes] = save_py2_str

    def save_global(self, obj, name=None):
        if obj is _NUMPY_RECONSTRUCT:
            self.write(pickle.GLOBAL + b'numpy.core.multiarray\n_reconstruct\n')
            self.memoize(obj)
        else:
            super().save_global(obj, name)


def save_py2_pickle(path, obj):
    makedirs_for(path)
    with open(path, 'wb') as f:
        _Py2Pickler(f, protocol=2).dump(obj)
