"""Attack 4 (rag10 and rag4): rag10's worker is given the reference rag4 to rag9; its lab marshals their
code into every place it can write (its scratch, /tmp, /dev/shm, $HOME, beside its file). The same
student's rag4, in another worker, looks in its own places and in every other worker's scratch folder
(/tmp/grading-*), rebuilds the reference rag4 from what it finds and uses it."""

import marshal

from kit import TOKEN, adopt_code, given_labs, lab_name, leave, pick_up, quietly

PAYLOAD = f"redteam-{TOKEN}-traveller.marshal"


def attack(lab: dict) -> None:
    if lab_name(lab) == "rag10":
        leave(lab, PAYLOAD, marshal.dumps(given_labs()))
        return
    for data in pick_up(lab, PAYLOAD):
        carried = quietly(marshal.loads, data) or {}
        if lab_name(lab) in carried and adopt_code(lab, carried[lab_name(lab)]):
            return
