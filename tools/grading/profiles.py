"""The hypothesis profiles the grading tests run under, in pytest and in a lab's own final check.

"fast" (the default) runs the same examples every time: fair to every student,
quick for CI, and the same examples a lab's final check runs (labkit/public_tests.py),
so a lab whose check passes has passed what the grader's public tests try. It
skips the "explain" phase, which reruns a failing test many times over to say
which parts of its input matter (seconds per failure, and the one-line reason
does not show it). "deep" searches far wider, with a time limit to match (see
docs/maintainers.md):

    pytest --hypothesis-profile=deep --timeout=600

"The same examples" needs more than a fixed seed: hypothesis (6.131 on) also
draws, now and then, a literal from the source of the project's modules that
happen to be imported at the time (its "local constants"). Those differ from run
to run: the hidden tests import tools/grading/oracles.py, a lab's check imports
the lab itself, `pytest` counts its own script. So a derandomized profile draws
from hypothesis's built-in constants alone (same_examples_anywhere).
"""

from hypothesis import HealthCheck, Phase, settings

FAST_EXAMPLES = 60  # a property test's examples in the default profile


def same_examples_anywhere() -> None:
    """Draw no literal from the modules a process happens to have imported, only hypothesis's own: the
    same test then tries the same examples in the grader's public run, its run with the hidden tests,
    and a lab's final check. Always, not only under a derandomized profile: hypothesis keeps the
    constants it drew once for the whole process, so a seeded hidden test run first would hand the
    public tests after it the project's literals. A hypothesis without local constants (before 6.131)
    needs nothing."""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:
        return
    local_constants = getattr(providers, "_get_local_constants", None)
    if local_constants is None or getattr(local_constants, "pinned", False):
        return

    def pinned_constants():
        return Constants()

    pinned_constants.pinned = True
    providers._get_local_constants = pinned_constants
    cache = getattr(providers, "CONSTANTS_CACHE", None)  # what was drawn before the pin: forgotten
    getattr(cache, "cache", {}).clear()


def load_fast_profile() -> None:
    """Register both profiles and load "fast" (pytest's --hypothesis-profile may switch later)."""
    same_examples_anywhere()
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
