"""chunking-labs: the course's command (pyproject.toml's [project.scripts]), one subcommand per task.

    chunking-labs start DIR                             a student's copy of the labs to work in
    chunking-labs compare DOCS --questions QUESTIONS    the course's harness on your own documents
    chunking-labs chunk DOCS --method NAME              the chosen chunking, as JSON lines for a pipeline

Each subcommand lives in its own module, which gives its options (`add_arguments`) and runs
them (`settings_of`, `run`); this file only names them, so a new task is one more entry.
"""

from __future__ import annotations

import argparse
import sys

from labkit import chunk, compare, start

SUBCOMMANDS = {  # name -> (module, one line of help)
    "start": (start, "write a student's copy of the labs, their hints and notebooks into DIR"),
    "compare": (compare, "which chunking finds the answers in your own documents, with intervals"),
    "chunk": (chunk, "write one chunker's chunks of your documents as JSON lines, for your own pipeline"),
}


def main(argv=None) -> int:
    """Parse `chunking-labs SUBCOMMAND ...` and run the subcommand."""
    parser = argparse.ArgumentParser(prog="chunking-labs", description="Chunking Labs, the course's command.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="SUBCOMMAND")
    for name, (module, summary) in SUBCOMMANDS.items():
        module.add_arguments(commands.add_parser(name, help=summary, description=summary))
    arguments = parser.parse_args(argv)
    module = SUBCOMMANDS[arguments.command][0]
    return module.run(module.settings_of(arguments))


if __name__ == "__main__":
    sys.exit(main())
