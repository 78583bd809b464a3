"""Test isolation: a Runner (or a test) that makes mmdet/mmseg/vitbench the current default scope must not
leak it into later tests, which would then resolve type names in the wrong registry."""
import pytest
from mmengine.registry import DefaultScope


@pytest.fixture(autouse=True)
def _restore_default_scope():
    before = dict(DefaultScope._instance_dict)
    yield
    DefaultScope._instance_dict.clear()
    DefaultScope._instance_dict.update(before)
