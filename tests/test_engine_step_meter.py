"""vitbench/engine/step_meter.py: side-by-side timing and peak memory, on CPU and (with a stand-in for the CUDA
runtime, since CI has no GPU) through the CUDA path."""
import time

import pytest
import torch

from vitbench.engine.step_meter import peak_memory_mb, resolve_device, time_side_by_side


def test_rounds_alternate_after_warm_up_and_a_slower_step_measures_slower():
    calls = []

    def sleeper(name, seconds):
        def fn():
            calls.append(name)
            time.sleep(seconds)
        return fn

    secs = time_side_by_side({'a': sleeper('a', 0.004), 'b': sleeper('b', 0.012)}, rounds=4, iters=2, warmup=2)
    # warm-up first (each step twice), then rounds of 2 calls in the order a b, b a, a b, b a
    assert calls == ['a', 'a', 'b', 'b'] + ['a'] * 2 + ['b'] * 4 + ['a'] * 4 + ['b'] * 4 + ['a'] * 2
    for fastest, median in secs.values():
        assert 0 < fastest <= median
    assert 2 < secs['b'][0] / secs['a'][0] < 4  # 12 ms vs 4 ms per call


def test_cpu_clock_does_not_count_waiting():
    secs = time_side_by_side({'sleep': lambda: time.sleep(0.02)}, rounds=2, clock='cpu')
    assert secs['sleep'][0] < 0.01


def test_peak_memory_of_a_step_on_cpu():
    def step():
        x = torch.ones(64 * 2 ** 20 // 4)  # 64 MiB, touched
        x += 1
    reading = peak_memory_mb(step, 'cpu')
    if reading is None:
        pytest.skip('no /proc/self/clear_refs here')
    assert 60 < reading < 200


@pytest.mark.skipif(torch.cuda.is_available(), reason='checks the message of a machine without CUDA')
def test_asking_for_cuda_without_it_says_so():
    with pytest.raises(ValueError, match='CUDA is not available here.*--device cpu'):
        resolve_device('cuda')
    with pytest.raises(ValueError, match="expected 'cpu' or 'cuda"):
        resolve_device('mps')
    assert resolve_device(None) == torch.device('cpu')


class FakeCuda:
    """What step_meter uses of torch.cuda: a GPU clock that advances only by the work queued on it, which
    finishes at a synchronisation, and an allocator whose peak a step raises."""

    def __init__(self):
        self.gpu_ms, self.queued_ms, self.allocated, self.peak, self.log = 0., 0., 100, 100, []

    def run(self, ms, alloc=0):  # a step: queues GPU work and allocates memory
        self.queued_ms += ms
        self.peak = max(self.peak, self.allocated + alloc)

    def synchronize(self, device=None):
        self.log.append('sync')
        self.gpu_ms += self.queued_ms
        self.queued_ms = 0.

    def Event(self, enable_timing=False):  # noqa: N802
        fake = self

        class Event:
            def record(self):
                fake.log.append('record')
                self.at = fake.gpu_ms + fake.queued_ms

            def synchronize(self):
                fake.synchronize()

            def elapsed_time(self, other):
                return other.at - self.at
        return Event()

    def memory_allocated(self, device=None):
        return self.allocated

    def reset_peak_memory_stats(self, device=None):
        self.peak = self.allocated

    def max_memory_allocated(self, device=None):
        return self.peak


def test_the_cuda_path_times_by_events_and_reads_the_allocator(monkeypatch):
    fake = FakeCuda()
    for name in ('synchronize', 'Event', 'memory_allocated', 'reset_peak_memory_stats', 'max_memory_allocated'):
        monkeypatch.setattr(torch.cuda, name, getattr(fake, name))
    device = torch.device('cuda', 0)
    # the host returns at once: only the events see the 30 ms / 10 ms of queued GPU work
    secs = time_side_by_side({'slow': lambda: fake.run(30), 'fast': lambda: fake.run(10)}, rounds=3, iters=2,
                             device=device, warmup=1)
    assert secs == {'slow': (pytest.approx(0.030), pytest.approx(0.030)),
                    'fast': (pytest.approx(0.010), pytest.approx(0.010))}
    assert fake.log[:2] == ['sync', 'sync']  # warm-up work is finished before the first round starts
    assert fake.queued_ms == 0  # every round waited for its work: none leaks into the next one's
    assert peak_memory_mb(lambda: fake.run(5, alloc=3 * 2 ** 20), device) == pytest.approx(3.0)
