"""iNaturalist 2018 / 2019 from the competition's COCO-style json files.

``{train,val}<year>.json`` hold ``images`` (id, file_name relative to the data root, e.g.
``train_val2018/Plantae/7477/<md5>.jpg``), ``annotations`` (image_id, category_id) and ``categories`` (id, name).
Labels are the category ids in sorted order, which for the real files (ids 0 .. C-1) is the id itself.
Images are not listed up front (437k files); a missing one is named when it is read.

``label_level``: the species (default), or a taxonomic rank of ``categories.json`` (kingdom, phylum, class, order,
family, genus): the classes are then the rank's names in sorted order, as Grafit's coarse levels (thesis Tables
2.5, 2.6, 2.14). Every sample also carries its species label as ``species_label``.
"""
import json
from typing import List, Tuple

from vitbench.registry import DATASETS

from .base import TransferDataset

RANKS = ('kingdom', 'phylum', 'class', 'order', 'family', 'genus')
# Sizes as the transfer papers give them (DeiT III thesis Table 6.10); both years ship a train and a val json.
OFFICIAL = {2018: dict(classes=8142, train=437513, val=24426), 2019: dict(classes=1010, train=265240, val=3003)}


@DATASETS.register_module()
class INaturalist(TransferDataset):
    """Args:
        year: 2018 or 2019.
    """
    LAYOUT = """\
<data_root>/
  train_valYYYY/<supercategory>/<category id>/<md5>.jpg
  trainYYYY.json, valYYYY.json   {"info", "licenses", "images", "annotations", "categories"}: images[i] has
                                 id, file_name (relative to <data_root>), width, height; annotations[i] has
                                 id, image_id, category_id (0-based); categories[i] has id, name
  categories.json                [{"id", "name", "supercategory", "kingdom", ..., "genus"}] by id (the
                                 taxonomy; DeiT's INatDataset reads it; this reader with label_level=<rank>)"""
    SPLITS = ('train', 'val')
    ANNOTATIONS = '{split}{year}.json'
    IMAGES = 'train_val{year}'

    def __init__(self, data_root: str, split: str, year: int = 2018, label_level: str = 'species', **kwargs):
        if year not in OFFICIAL:
            raise ValueError(f'INaturalist: year must be one of {tuple(OFFICIAL)}, got {year!r}')
        if label_level != 'species' and label_level not in RANKS:
            raise ValueError(f"INaturalist: label_level must be 'species' or one of {RANKS}, got {label_level!r}")
        self.year, self.label_level = year, label_level
        self.OFFICIAL = OFFICIAL[year]
        self.LAYOUT = self.layout_of(year)
        super().__init__(data_root, split, **kwargs)

    @classmethod
    def layout_of(cls, year: int) -> str:
        """``LAYOUT`` for one year's release (YYYY has the width of a year, so the columns stay aligned)."""
        return cls.LAYOUT.replace('YYYY', str(year))

    def load_split(self) -> Tuple[List[str], List[dict]]:
        rel = self.ANNOTATIONS.format(split=self.split, year=self.year)
        with open(self.need_file(rel)) as f:
            try:
                data = json.load(f)
            except ValueError as e:
                raise self.format_error(rel, f'not valid JSON ({e})') from e
        if not isinstance(data, dict) or not all(isinstance(data.get(k), list)
                                                 for k in ('images', 'annotations', 'categories')):
            raise self.format_error(rel, 'expected lists under "images", "annotations" and "categories" '
                                    '(the test json has no annotations: evaluate on val)')
        categories = sorted(data['categories'], key=lambda c: c['id'])
        label = {c['id']: i for i, c in enumerate(categories)}
        files = {image['id']: image['file_name'] for image in data['images']}
        data_list = []
        for ann in data['annotations']:
            if ann.get('image_id') not in files or ann.get('category_id') not in label:
                raise self.format_error(rel, f'annotation {ann.get("id")}: image_id {ann.get("image_id")} or '
                                        f'category_id {ann.get("category_id")} is not in images / categories')
            data_list.append(dict(img_path=self.path(files[ann['image_id']]), gt_label=label[ann['category_id']]))
        self.need_dir(self.IMAGES.format(year=self.year))
        species = [str(c.get('name', c['id'])) for c in categories]
        if self.label_level == 'species':
            return species, data_list
        return self._to_rank(categories, data_list)

    def _to_rank(self, categories, data_list):
        """Relabel the samples by ``label_level``'s names, read from categories.json (by category id)."""
        rel = 'categories.json'
        with open(self.need_file(rel)) as f:
            try:
                taxonomy = {c['id']: c for c in json.load(f)}
            except (ValueError, TypeError, KeyError) as e:
                raise self.format_error(rel, f'expected a JSON list of categories with "id" ({e})') from e
        names = []
        for c in categories:
            entry = taxonomy.get(c['id'])
            if entry is None or self.label_level not in entry:
                raise self.format_error(rel, f'category {c["id"]} has no {self.label_level!r} (label_level)')
            names.append(str(entry[self.label_level]))
        classes = sorted(set(names))
        coarse = [classes.index(n) for n in names]
        for info in data_list:
            info['species_label'] = info['gt_label']
            info['gt_label'] = coarse[info['gt_label']]
        return classes, data_list
