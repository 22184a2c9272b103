"""Names from user code shown so that they read as what they are (issue 19).

C0 and C1 controls (all but the newline), bidi embeddings, overrides and isolates
(U+202A-U+202E, U+2066-U+2069) and the marks U+200E/U+200F are written as their escape
(``\\u202e``): a layer name holding a right-to-left override cannot read as another name. The
one rule for Python-drawn pictures; the page's is js/view/visible_text.ts (same characters).
"""

from __future__ import annotations

import re

_INVISIBLE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible_text(text: str) -> str:
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
