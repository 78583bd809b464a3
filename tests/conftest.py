"""Test isolation: a Runner (or a test) that makes mmdet/mmseg/vitbench the current default scope must not
leak it into later tests, which would then resolve type names in the wrong registry."""
import pytest
from mmengine.registry import DefaultScope, init_default_scope

from harness.tasks import load_suite_records

# the suite's task records, as a reader of results loads them (tools/leaderboard.py): the tests of vitbench.results
# read result.json files of every task without importing the task packages
load_suite_records()


@pytest.fixture(autouse=True)
def _restore_default_scope():
    before = dict(DefaultScope._instance_dict)
    yield
    DefaultScope._instance_dict.clear()
    DefaultScope._instance_dict.update(before)


@pytest.fixture
def vitbench_scope():
    """For modules whose tests build from the vitbench registries by bare type names: set per test, not at
    import, since another module's scope may be current when a test runs."""
    init_default_scope('vitbench')


@pytest.fixture
def checkpoint_policy():
    """For tests that torch.load runner checkpoints themselves, as a user's script would: install the policy
    that tools/train.py installs (vitbench.engine.checkpoint_policy)."""
    from vitbench.engine.checkpoint_policy import install_checkpoint_policy
    install_checkpoint_policy()
