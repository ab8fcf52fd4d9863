"""What each lab is worth, and how its points split over the functions a student writes.

Every lab is worth the same: a lab is a week's work whatever its length. A
function's points are shared by the grading tests that judge it (a test says
which with `@pytest.mark.grades("token_windows")`), and a parametrized test
shares its test's part among its cases, so a function tested by many cases
costs no more than one tested by a few. Where a function has hidden tests,
those drawn from the grading seed share 80% of its points, the fixed hidden
cases 10% and the public tests 10% (tests/conftest.py's kind_shares).
docs/instructors.md shows this table; the grader refuses a
test that names a function not here, and tests/test_memoriser.py checks that
every function here has a hidden test drawn from the grading seed.
"""

POINTS = {
    "rag4": {"word_windows": 5, "token_windows": 5},
    "rag5": {"split_at_seams": 3, "pack": 2, "add_overlap": 2, "recursive_chunks": 3},
    "rag6": {"read_blocks": 3, "pack_blocks": 3, "markdown_chunks": 2, "verify": 2},
    "rag7": {"make_header": 2, "header_chunks": 5, "with_table_rows": 3},
    "rag8": {"recall_at_k": 2, "mrr_at_k": 1, "coverage_at_k": 2, "precision_and_iou": 2, "paired_bootstrap": 3},
    "rag9": {"window_texts": 1, "neighbour_distances": 1, "breakpoints": 2, "best_cuts": 3,
             "semantic_chunks": 3},
    "rag10": {"parent_index": 2, "best_parents": 2, "assemble": 4, "small_to_big": 2},
    "rag11": {"search_terms": 2, "bm25_weight": 2, "bm25_index": 2, "reciprocal_rank_fusion": 2,
              "convex_fusion": 1, "read_parents": 1},
}

LABS = tuple(POINTS)


def lab_points(lab: str) -> int:
    """What lab `lab` is worth in all."""
    return sum(POINTS[lab].values())
