"""One module a lab: what a lab's lesson stands on and need not show (its page and answer, what its
demonstration prints, its dial's report, the checks it ends with). A curious student may read it."""
