#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image. The
# autograder zip (tools/grading/gradescope/make_autograder_zip.py) is unpacked in
# $AUTOGRADER_ROOT/source: the whole course, with this file at its root.
#
# AUTOGRADER_ROOT    the autograder's folder, Gradescope's /autograder when unset; the
#                    virtual environment goes in it (venv/), beside source/. Set it to try
#                    the autograder elsewhere (tests/test_gradescope.py does), and set the
#                    same for run_autograder.
# AUTOGRADER_PYTHON  a Python that already has requirements.txt installed: then no virtual
#                    environment is made and nothing is installed with pip, and run_autograder
#                    grades with that Python (importing the course from source/ all the same).
#                    Unset on Gradescope, where the venv is made.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
root="${AUTOGRADER_ROOT:-/autograder}"

updated=""
apt_install() {  # apt-get install, after one apt-get update for the whole script
    [ -n "$updated" ] || { apt-get update -q; updated=yes; }
    apt-get install -y -q "$@"
}

# bubblewrap (bwrap) sandboxes each student's worker.
if ! command -v bwrap >/dev/null; then
    apt_install bubblewrap
fi

if [ -n "${AUTOGRADER_PYTHON:-}" ]; then
    python="$AUTOGRADER_PYTHON"
else
    # A virtual environment for the course; Ubuntu's python3 makes one only with python3-venv.
    if ! python3 -m venv "$root/venv" 2>/dev/null; then
        apt_install python3 python3-pip python3-venv
        rm -rf "$root/venv"
        python3 -m venv "$root/venv"
    fi
    python="$root/venv/bin/python"
fi
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "$python is $("$python" --version 2>&1): the course needs 3.10 or newer; use a newer image" >&2
    exit 1
fi

if [ -z "${AUTOGRADER_PYTHON:-}" ]; then
    cd "$root/source"  # requirements.txt installs the course itself with `-e .`, a path from here
    "$python" -m pip install --quiet --upgrade pip
    "$python" -m pip install --quiet -r requirements.txt
fi

# Where the container forbids namespaces, bubblewrap cannot run and each worker runs as a
# separate user instead (docs/instructors.md, section 5). That user must not reach the
# reference, the tests or the tools: close them to other users (the grader checks it).
for folder in solutions notebooks/solutions tests tools benchmarks; do
    [ ! -e "$root/source/$folder" ] || chmod -R o-rwx "$root/source/$folder"
done

# run_autograder grades nothing behind a weaker wall than the sandbox or the separate user: say
# now which one this image gives (and make that user), or stop with the reason.
cd "$root/source"
PYTHONPATH="$root/source/tools/grading:$root/source" "$python" -c \
    'import sys, grade_class as g; sys.exit(g.isolation_refused(False, g.SUBMISSION_WALLS) or None)'
