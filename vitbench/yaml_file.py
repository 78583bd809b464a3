"""A YAML file read whole, a failure in one line naming the file: the leaderboard's paper rows
(``vitbench/results/paper.py``) and the recipe-audit tables (``pretrain/recipe_audit.py``). Torch-free."""
from typing import Any, Type

import yaml


def read_yaml(path: str, error: Type[Exception]) -> Any:
    """The document in ``path``; an unreadable file or invalid YAML raises ``error`` naming the file and why."""
    try:
        with open(path, encoding='utf-8') as f:
            return yaml.safe_load(f)
    except OSError as e:
        raise error(f'{path}: cannot be read: {e.strerror or e}') from e
    except yaml.YAMLError as e:
        raise error(f'{path}: not valid YAML: {e}') from e
