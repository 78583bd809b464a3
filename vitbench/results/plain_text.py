"""Text from result files made harmless in every output (Markdown, CSV, HTML, the terminal): a backbone, recipe or
dataset name is whatever a result.json says, and a control or bidirectional character in it would reorder or hide
what a reader sees (U+202E, right-to-left override, turns ``vit_b`` into what looks like another name: "Trojan
Source"), move a terminal's cursor or, in Markdown, a ``<script>`` would pass as raw HTML. Each such character is
written as its visible code, ``⟨U+202E⟩`` (angle brackets that
no format reads as markup); Markdown escapes what would start raw HTML or a link."""
import re

# C0 and C1 controls but tab and line feed, which the formats lay out themselves; the bidirectional embeddings,
# overrides, isolates and marks; the line and paragraph separators (a line break to some readers, not to others)
_HIDDEN = re.compile('[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]')


def neutralize(text: str) -> str:
    """``text`` with each control and bidirectional character written as ``⟨U+XXXX⟩``."""
    return _HIDDEN.sub(lambda m: f'\u27e8U+{ord(m.group()):04X}\u27e9', text)


def has_hidden(text: str) -> bool:
    return _HIDDEN.search(text) is not None


def markdown_safe(text: str) -> str:
    """A whole Markdown page as any renderer shows it as text: no raw HTML (``<`` written ``&lt;``: no tag, comment
    or autolink can start), no link or image a name could make (``](`` written ``]\\(``), and no hidden
    characters (:func:`neutralize`). The page's own Markdown uses neither."""
    return neutralize(text).replace('<', '&lt;').replace('](', ']\\(')
