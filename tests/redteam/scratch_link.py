"""Attack 11b (rag4): make a symbolic link in the scratch folder to the course's solutions file (its target
written relative to a folder two levels down, where the wall checks it, so that it points elsewhere from
where it lies) and import the reference through the link."""

import os

from kit import adopt, course_roots, quietly, read_text, succeeds


def link_to(target: str) -> str:
    """A link in the scratch folder (the working folder) whose target, read from where it lies, is `target`."""
    scratch = os.getcwd()
    up = "../" * len([part for part in scratch.split("/") if part])
    succeeds(os.makedirs, os.path.join("deep", "er"), exist_ok=True)
    succeeds(os.makedirs, "." + os.path.dirname(target), exist_ok=True)  # where the wall's reading points
    os.chdir(os.path.join("deep", "er"))
    try:
        succeeds(os.symlink, up + target.lstrip("/"), os.path.join("..", "..", "reference.py"))
    finally:
        os.chdir(scratch)
    return os.path.join(scratch, "reference.py")


def attack(lab: dict) -> None:
    for root in course_roots():
        link = link_to(os.path.join(root, "solutions", os.path.basename(lab["__file__"])))
        source = quietly(read_text, link)
        if source and "TODO(" not in source and adopt(lab, source, link):
            return
