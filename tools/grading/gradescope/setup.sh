#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image. The
# autograder zip (tools/grading/gradescope/make_autograder_zip.py) is unpacked in
# /autograder/source: the whole course, with this file at its root.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

# A virtual environment for the course; Ubuntu's python3 makes one only with python3-venv.
if ! python3 -m venv /autograder/venv 2>/dev/null; then
    apt-get update -q
    apt-get install -y -q python3 python3-pip python3-venv
    rm -rf /autograder/venv
    python3 -m venv /autograder/venv
fi
if ! /autograder/venv/bin/python -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "$(python3 --version) is too old: the course needs 3.10 or newer; use a newer image" >&2
    exit 1
fi

cd /autograder/source  # requirements.txt installs the course itself with `-e .`, a path from here
/autograder/venv/bin/pip install --quiet --upgrade pip
/autograder/venv/bin/pip install --quiet -r requirements.txt
