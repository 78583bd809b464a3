"""The family contract (backbones/contract.py) over every registered family and every variant, as timm's model tests
go over every model: the parameters are read from the registries (``FAMILIES``, ``VARIANTS``) when the tests are
collected, so a family is covered by registering it, not by editing a list here.

Every variant is built on the meta device (no memory, no initialisation) and checked against its layout, its dense
backbone and its swap into the demo UperNet and Mask R-CNN; those under :data:`BUDGET` parameters, and the smallest
of each family, are built and run (tests/_contract_checks.py says what is checked); the smallest of each family also
through the swapped UperNet and Mask R-CNN backbone and neck. The heavy variants (DeiT III-H, CaiT-M) stay on meta."""
from functools import lru_cache

import pytest

from _contract_checks import check_dense_tasks, check_family, check_on_meta, check_runs, meta_model, one_line
from backbones import FAMILIES, list_models, register_family
from backbones.complexity import count_params
from backbones.family import Family
from backbones.vit import ViTFamilyMixin

BUDGET = 16e6  # parameters: the variants built and run for real (the tiny ViTs, ResMLP-S12, the demo ones)


@lru_cache(maxsize=None)
def params(name: str) -> int:
    return count_params(meta_model(name))


SMALLEST = {family: min(record.variants, key=params) for family, record in FAMILIES.items() if record.variants}
RUN = sorted({name for name in list_models() if params(name) <= BUDGET} | set(SMALLEST.values()))


@pytest.mark.parametrize('family', sorted(FAMILIES))
def test_each_family_states_the_contract_and_names_its_dense_backbone(family):
    check_family(family)


def test_a_class_short_of_the_contract_or_a_variant_short_of_a_layout_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr('backbones.family.FAMILIES', dict(FAMILIES))
    bare = Family(name='bare', title='Bare', model_class=ViTFamilyMixin, dense_type='Bare')
    with pytest.raises(TypeError) as error:  # the walk and the layer ids, but no model, no prefix tokens stated
        register_family(bare)
    assert one_line(error).startswith("register_family('bare'): ViTFamilyMixin lacks forward(), forward_features(), "
                                      "forward_head(), _trunk_input(), num_prefix_tokens, the constructor argument(s) "
                                      "embed_dim, patch_size, depth, img_size,")
    vit = FAMILIES['vit'].model_class
    with pytest.raises(ValueError) as error:
        register_family(Family(name='other', title='Other', model_class=vit, dense_type='Other'),
                        variants={'other_tiny': dict(paper='', kwargs=dict(patch_size=(16, 8), heads=3))})
    assert one_line(error) == ("register_family('other'): variant 'other_tiny': unknown argument heads, patch_size "
                               "(got (16, 8), expected an int) (the task adapters read ('embed_dim', 'patch_size', "
                               "'depth') of its arguments completed with VisionTransformer's defaults)")
    assert 'other' not in FAMILIES and 'other_tiny' not in list_models()


@pytest.mark.parametrize('name', list_models())
def test_each_variant_meets_its_layout_on_the_meta_device(name):
    check_on_meta(name)


@pytest.mark.parametrize('name', RUN)
def test_each_small_variant_runs_as_its_contract_says(name, tmp_path):
    check_runs(name, tmp_path)


@pytest.mark.parametrize('name', sorted(SMALLEST.values()))
def test_the_smallest_variant_of_each_family_feeds_upernet_and_mask_rcnn(name):
    check_dense_tasks(name)
