"""Where a lab runs: in a Jupyter kernel or not, and what a notebook shows for a failed lab."""

from __future__ import annotations

import sys


def in_notebook() -> bool:
    """True inside a Jupyter kernel, where output can be HTML and a lab must not exit.

    ipykernel being imported is not enough (Jupyter's own tools import it);
    the running IPython shell must be a kernel's, which has a `kernel`.
    """
    if "ipykernel" not in sys.modules:
        return False
    from IPython import get_ipython

    return hasattr(get_ipython(), "kernel")


def notebook_cell_name(filename: str) -> str:
    """'In[5]' if `filename` is the code of a cell run in this kernel, else ''."""
    from IPython import get_ipython

    shell = get_ipython()
    label = shell.compile.format_code_name(filename) if shell else None
    return label[1] if label else ""


class LabFailed(Exception):
    """Raised in a notebook (instead of exiting) when a lab's check fails or a TODO is reached."""

    def _render_traceback_(self):
        """What IPython shows instead of a traceback: the message says all a learner needs."""
        return [f"LabFailed: {self}"]
