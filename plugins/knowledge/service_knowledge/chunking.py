"""Splitting text into chunks by size, overlap and separator.

Hand-written (about 40 lines) rather than a text-splitter library: the
candidates pull in LangChain or tokenizers for what is a character-window
merge, and the behaviour needs to be exact and tested here.
"""

from __future__ import annotations


def split(text: str, *, size: int = 1000, overlap: int = 200, separator: str = "\n") -> list[str]:
    """Pieces of ``text`` at ``separator``, merged into chunks of at most ``size`` characters.

    Each chunk after the first starts with the last ``overlap`` characters of
    the previous one; a piece longer than ``size`` is cut into windows of
    ``size`` characters overlapping by ``overlap``. Empty chunks are dropped.
    """
    if size < 1:
        raise ValueError("chunk size must be at least 1")
    if overlap < 0 or overlap >= size:
        raise ValueError("chunk overlap must be at least 0 and smaller than the chunk size")
    separator = separator.encode().decode("unicode_escape") if "\\" in separator else separator
    pieces = text.split(separator) if separator else [text]
    step = size - overlap
    units: list[str] = []
    for piece in pieces:
        if len(piece) <= size:
            units.append(piece)
        else:
            units.extend(piece[i : i + size] for i in range(0, len(piece) - overlap, step))
    chunks: list[str] = []
    current = ""
    for unit in units:
        candidate = f"{current}{separator}{unit}" if current else unit
        if len(candidate) <= size:
            current = candidate
            continue
        if current.strip():
            chunks.append(current)
        tail = current[-overlap:] if overlap and current else ""
        current = f"{tail}{separator}{unit}" if tail and len(tail) + len(separator) + len(unit) <= size else unit
    if current.strip():
        chunks.append(current)
    return [c.strip() for c in chunks if c.strip()]
