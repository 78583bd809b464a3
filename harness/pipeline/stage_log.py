"""Reading a stage's log (``pipeline.log`` in its work dir): the latest training progress line for the console,
and after a failure the line that names its error and the end of this run's part."""
import re
from typing import List, Optional

_PROGRESS_MARKS = ('Epoch(train)', 'Iter(train)', 'Epoch(val)', 'Iter(val)', 'Epoch(test)', 'Iter(test)')
_ERROR_LINE = re.compile(r'^(?:[\w.]+\.)?\w*(?:Error|Exception|Exit|Interrupt)(?::|$)|^error: ')


def progress_of(line: str) -> Optional[str]:
    """A log line's training progress, from 'Epoch(train)' (or the like) on; None if it has none."""
    at = min((line.find(m) for m in _PROGRESS_MARKS if m in line), default=-1)
    return line[at:].strip() if at >= 0 else None


def error_cause(path: str, offset: int = 0) -> str:
    """The last line of this run's log that names an error (a traceback's last line, a tool's 'error: ...'), or ''."""
    lines = [line.strip() for line in log_tail(path, 200, offset)]
    return next((line[:300] for line in reversed(lines) if _ERROR_LINE.match(line)), '')


def log_tail(path: str, n: int, offset: int = 0) -> List[str]:
    """The last ``n`` lines of ``path`` written after byte ``offset`` (this run's, not earlier ones')."""
    try:
        with open(path, 'rb') as f:
            f.seek(offset)
            lines = f.read().decode('utf-8', errors='replace').splitlines(keepends=True)
    except OSError:
        return []
    while lines and not lines[0].strip():
        lines.pop(0)
    return lines[-n:]
