"""The statistics of the leaderboard: the mean of a cell's runs over seeds with its spread and 95 % confidence
interval, and the paired difference of two rows over the seeds they share.

The interval is Student's t for the mean of n runs (n - 1 degrees of freedom), the textbook choice for the
handful of seeds a benchmark can afford; for a paired difference it is the same interval over the per-seed
differences, which removes what two runs of one seed share (data order, initialisation of the head).
"""
import math
import statistics
from dataclasses import dataclass
from typing import Dict, Hashable, Optional, Sequence

from scipy.stats import t as student_t

CONFIDENCE = 0.95


@dataclass(frozen=True)
class Summary:
    """``mean`` of ``n`` values; with n >= 2 also the sample ``std`` and the interval [ci95_low, ci95_high].
    ``interval`` says what the interval is over: 'seeds' (Student's t), 'images' (a bootstrap over the test images
    of one run, :mod:`vitbench.results.bootstrap`); '' without one."""
    mean: float
    n: int
    std: Optional[float] = None
    ci95_low: Optional[float] = None
    ci95_high: Optional[float] = None
    interval: str = ''

    @property
    def excludes_zero(self) -> bool:
        """Whether the interval lies entirely above or below 0 (a significant difference at 95 %)."""
        return self.ci95_low is not None and (self.ci95_low > 0 or self.ci95_high < 0)


def summarize(values: Sequence[float]) -> Summary:
    values = [float(v) for v in values]
    if not values:
        raise ValueError('summarize() needs at least one value')
    mean = statistics.fmean(values)
    if len(values) < 2:
        return Summary(mean, 1)
    std = statistics.stdev(values)  # sample standard deviation (n - 1)
    half = student_t.ppf(0.5 + CONFIDENCE / 2, len(values) - 1) * std / math.sqrt(len(values))
    return Summary(mean, len(values), std, mean - half, mean + half, 'seeds')


def paired_difference(values: Dict[Hashable, float], baseline: Dict[Hashable, float]) -> Optional[Summary]:
    """The summary of ``values[s] - baseline[s]`` over the seeds ``s`` both have; None when they share none."""
    shared = [s for s in values if s in baseline]
    if not shared:
        return None
    return summarize([values[s] - baseline[s] for s in shared])
