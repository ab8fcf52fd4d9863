"""What `chunking-labs compare` runs beside the reference labs, kept out of a student's handout.

Each module here computes what a lab's TODO computes, in the way a big corpus needs (less memory,
the same numbers): handed to a student it would answer the TODO by a call, so the handout leaves
this package out (tools/grading/make_handout.py refuses it) and compare imports it only when it
runs the reference labs of solutions/, which a student's handout does not have either.
"""
