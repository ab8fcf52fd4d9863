"""labkit/boundaries.py: what a chunker's boundaries do to the text, counted on cases worked out by hand."""

from academy_llm import make_chunk
from labkit.boundaries import Boundaries, boundary_sentence, ends_inside, regions_split


def chunks(text, cuts):
    """Chunks of `text` between the given cut positions."""
    edges = [0] + cuts + [len(text)]
    return [make_chunk(text, start, end) for start, end in zip(edges, edges[1:])]


def test_ends_inside_a_word():
    text = "alpha beta gamma"
    words = [(0, 5), (6, 10), (11, 16)]
    assert ends_inside(text, [5, 6, 8, 16], words) == 1  # only 8 is inside "beta"


def test_a_region_is_split_when_no_chunk_holds_it_whole():
    text = "intro\n```\ncode\n```\nafter"
    region = (6, 19)
    assert regions_split(chunks(text, [6, 19]), [region]) == 0
    assert regions_split(chunks(text, [12]), [region]) == 1
    overlapping = [make_chunk(text, 0, 19), make_chunk(text, 12, len(text))]  # the second starts inside it
    assert regions_split(overlapping, [region]) == 0  # the first holds it whole


def test_the_sentence_says_fewer_more_or_as_many():
    mine, theirs = Boundaries(10, 0, 2, 9, 3, 4, 100), Boundaries(9, 5, 2, 9, 1, 4, 120)
    sentence = boundary_sentence(mine, theirs, "ours", "theirs")
    assert "0 against 5 (fewer)" in sentence and "2 against 2 (as many)" in sentence
    assert "3 against 1 (more)" in sentence
