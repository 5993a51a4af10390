"""Chunking by size, overlap and separator."""

from __future__ import annotations

import itertools

import pytest
from service_knowledge.chunking import split


def test_pieces_are_merged_up_to_the_size():
    text = "\n".join(f"line {i:02d}" for i in range(10))  # 10 lines of 7 characters
    chunks = split(text, size=30, overlap=0, separator="\n")
    assert all(len(c) <= 30 for c in chunks)
    assert "\n".join(chunks) == text


def test_overlap_repeats_the_end_of_the_previous_chunk():
    text = "\n".join(f"sentence number {i}" for i in range(20))
    chunks = split(text, size=60, overlap=20, separator="\n")
    assert len(chunks) > 2
    for previous, current in itertools.pairwise(chunks):
        assert previous[-10:] in current
        assert len(current) <= 60


def test_long_pieces_are_windowed():
    text = "x" * 2500
    chunks = split(text, size=1000, overlap=100, separator="\n")
    assert [len(c) for c in chunks][:2] == [1000, 1000]
    assert sum(len(c) for c in chunks) >= 2500


def test_escaped_separator_and_empty_text():
    assert split("a\\n\\nb", size=10, overlap=0, separator="\\n\\n") == ["a\\n\\nb"]
    assert split("a\n\nb" * 5, size=4, overlap=0, separator="\\n\\n")[0] == "a"
    assert split("   ", size=10, overlap=0) == []


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (10, 10), (10, -1)])
def test_invalid_settings(size, overlap):
    with pytest.raises(ValueError):
        split("abc", size=size, overlap=overlap)
