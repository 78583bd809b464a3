"""What became of a stage of a pipeline run (:mod:`harness.pipeline.run`): one line of its summary."""
from dataclasses import dataclass
from typing import Optional

UNFINISHED = ('failed', 'diverged', 'blocked', 'interrupted')  # what the stages after one wait for in vain


@dataclass
class StageResult:
    id: str
    status: str  # ran | cached | failed | diverged | blocked | interrupted
    seconds: float = 0.0
    metric: str = ''
    detail: str = ''
    log: Optional[str] = None
