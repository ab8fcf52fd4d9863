"""Attack 2 (rag4): with the wall down, write the course's stub over every classmate's lab files: their
staged copies in OUT/students/*/labs (OUT found from this lab's own path) and their files in the
submissions folder (a folder the grader forbids, named in the worker's environment, that holds a folder
named like this student). It never writes in the course itself."""

import glob
import os

from kit import break_the_wall, course_roots, quietly, read_text, write_bytes


def classmates_files(lab: dict) -> list:
    """Every lab file of another student this lab can name."""
    labs = os.path.dirname(lab["__file__"])  # OUT/students/ME/labs
    me, students = os.path.basename(os.path.dirname(labs)), os.path.dirname(os.path.dirname(labs))
    folders = [students] + [folder for folder in os.environ.get("ACADEMY_GRADING_FORBID", "").split(os.pathsep)
                            if os.path.isdir(os.path.join(folder, me))]
    found = []
    for folder in folders:
        found += [path for path in glob.glob(os.path.join(folder, "*", "**", "rag*-*.py"), recursive=True)
                  if os.path.relpath(path, folder).split(os.sep)[0] != me]
    return found


def attack(lab: dict) -> None:
    if not break_the_wall():
        return
    course = course_roots()
    for path in classmates_files(lab):
        if any(os.path.realpath(path).startswith(root + os.sep) for root in course):
            continue
        stub = next(filter(None, (quietly(read_text, os.path.join(root, "labs", os.path.basename(path)))
                                  for root in course)), None)
        if stub:
            quietly(write_bytes, path, stub.encode())
