"""The hypothesis profiles the grading tests run under, in pytest and in a lab's own final check.

"fast" (the default) runs the same examples every time: fair to every student,
quick for CI, and the same examples a lab's final check runs (labkit/public_tests.py),
so a lab whose check passes has passed what the grader's public tests try. It
skips the "explain" phase, which reruns a failing test many times over to say
which parts of its input matter (seconds per failure, and the one-line reason
does not show it). "deep" searches far wider, with a time limit to match (see
docs/maintainers.md):

    pytest --hypothesis-profile=deep --timeout=600
"""

from hypothesis import HealthCheck, Phase, settings

FAST_EXAMPLES = 60  # a property test's examples in the default profile


def load_fast_profile() -> None:
    """Register both profiles and load "fast" (pytest's --hypothesis-profile may switch later)."""
    settings.register_profile(
        "fast",
        max_examples=FAST_EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
        phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
        report_multiple_bugs=False,  # one failure, so the reason's call and message belong together
    )
    settings.register_profile(
        "deep", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
    settings.load_profile("fast")
