"""Whether a piece of text is a whole number int() reads: ASCII digits only.

``str.isdigit()`` is also true of superscripts and other Unicode digits ("²4") that int()
refuses: a damaged dump, document or file name then raised a bare ValueError where the
package's own error, or "not one of ours", was due (found by the hostile-input property tests).
"""


def is_int_text(text: str, *, signed: bool = False) -> bool:
    """``text`` is ASCII digits (after one leading "-" when ``signed``), at least one."""
    digits = text[1:] if signed and text.startswith("-") else text
    return digits.isascii() and digits.isdigit()
