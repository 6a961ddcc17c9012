#!/usr/bin/env python3
"""Writes the class files of the pairwise-leakage rows in BENCHMARKS.md.

    python3 examples/bench/classes.py OUTDIR

har.json      the UCI HAR activities (6 states): transition counts of each
              subject's labels in file order, normalised, no smoothing
cyclic.json   [[.7,.25,.05],[.05,.7,.25],[.25,.05,.7]]
banded101.json, banded201.json
              stay 0.6, the other 0.4 shared equally by the states
              1..3 steps away (fewer at the edges)
random51.json, random101.json
              entries uniform on [0, 1) (random.Random(40)), rows normalised
All stationary.
"""
import csv, gzip, json, os, random, sys

out = sys.argv[1] if len(sys.argv) > 1 else "."
data = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "data")


def write(name, P):
    k = len(P)
    with open(os.path.join(out, name), "w") as f:
        json.dump({"states": [str(i) for i in range(k)],
                   "chains": [{"transition": P, "initial": "stationary"}]}, f)


def norm(row):
    s = sum(row)
    return [x / s for x in row]


counts = [[0] * 6 for _ in range(6)]
last = {}
with gzip.open(os.path.join(data, "uci_har_activity_sequences.csv.gz"), "rt") as f:
    for r in csv.DictReader(f):
        a = int(r["activity_id"]) - 1
        if r["subject"] in last:
            counts[last[r["subject"]]][a] += 1
        last[r["subject"]] = a
write("har.json", [norm(c) for c in counts])

write("cyclic.json", [[.7, .25, .05], [.05, .7, .25], [.25, .05, .7]])

for k in (101, 201):
    P = []
    for i in range(k):
        nb = [j for j in range(max(0, i - 3), min(k, i + 4)) if j != i]
        P.append([0.6 if j == i else (0.4 / len(nb) if j in nb else 0.0) for j in range(k)])
    write("banded%d.json" % k, P)

rng = random.Random(40)
for k in (51, 101):
    write("random%d.json" % k, [norm([rng.random() for _ in range(k)]) for _ in range(k)])
