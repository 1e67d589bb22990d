"""A program exercising examples/python/mcmcaudit_protocol.py (standard library only).

The release of a trial is [sum of the first column of its side's dataset,
number of rows]; seeds 13 to 16 make run misbehave in the ways the helper
must turn into trial errors. Every call of run also writes to stdout, which
the helper must divert to stderr.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples", "python"))
import mcmcaudit_protocol as mp  # noqa: E402

# Still in sys.stdout's buffer when serve starts (the test unsets
# PYTHONUNBUFFERED): serve must flush it to stderr, not to the protocol.
print("printed before serve")


def run(seed, side, rows):
    print("print() inside run goes to stderr")
    os.write(1, b"a native write to fd 1 goes to stderr\n")
    if seed == 13:
        raise ValueError("unlucky seed 13")
    if seed == 14:
        return [[float("nan"), 0.0]]
    if seed == 15:
        return [[1.0]]
    if seed == 16:
        return mp.Result([[1.0, 2.0]], info={"bad": float("inf")})
    total = 0.0
    for r in rows:
        total += r[0]
    return mp.Result([[total, float(len(rows))]], info={"seed": str(seed), "side": side, "label": rows[-1][-1]})


mp.serve(run, dim=2, releases=["only"])
