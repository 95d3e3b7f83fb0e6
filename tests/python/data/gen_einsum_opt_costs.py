#!/usr/bin/env python3
"""Generates einsum_opt_costs.json: opt_einsum's paths and costs for a fixed
set of equations, per strategy, so that tests/python/test_einsum.py can
compare Backplane's native optimisers with opt_einsum without the package.

Run once, with opt_einsum installed somewhere other than the project's
.venv (the project does not depend on it)::

    python3 -m venv /tmp/oe && /tmp/oe/bin/pip install opt_einsum==3.4.0
    /tmp/oe/bin/python tests/python/data/gen_einsum_opt_costs.py > tests/python/data/einsum_opt_costs.json

The equations are classic ones and random networks (seeded): each label
joins two operands (some three), a few labels are outputs, sizes 2 to 9.
opt_einsum's optimal and branch-all are factorial, so they get the smaller
networks only.
"""

import json
import random
import string

import opt_einsum as oe

LETTERS = string.ascii_letters

# (equation, size of each label)
CLASSIC = [
    ("ij,jk,kl->il", dict(i=8, j=64, k=32, l=4)),
    ("ab,bc,cd,de->ae", dict(a=256, b=256, c=256, d=256, e=256)),
    ("ea,fb,abcd,gc,hd->efgh", {c: 10 for c in "abcdefgh"}),
    ("bdik,acaj,ikab,ajac,ikbd->", dict(a=6, b=2, c=7, d=3, i=4, j=8, k=5)),
    ("abc,bcd,cde,def->af", dict(a=4, b=5, c=6, d=7, e=8, f=9)),
    ("i,ij,jk,k->", dict(i=100, j=50, k=200)),
    ("zab,zbc,zcd->zad", dict(z=4, a=16, b=32, c=8, d=64)),
    ("ab,cd,ef->abcdef", dict(a=2, b=3, c=4, d=5, e=6, f=7)),
    ("ij,ik,il,im->jklm", dict(i=9, j=2, k=3, l=4, m=5)),
    ("ab,ab,bc,cd->ad", dict(a=6, b=7, c=8, d=9)),
    ("abx,bcx,cdx,dax->x", dict(a=5, b=6, c=7, d=8, x=3)),
    ("ia,ib,ic,id,ie->abcde", dict(i=2, a=3, b=4, c=5, d=6, e=7)),
]


def shapes_of(eq, sizes):
    return [tuple(sizes[c] for c in term) for term in eq.split("->")[0].split(",")]


def random_network(n, seed, hyper=0.15, outputs=2):
    rng = random.Random(seed)
    terms = [[] for _ in range(n)]
    sizes = {}
    labels = iter(LETTERS)
    # A spanning chain keeps the network connected; then extra edges.
    edges = [(i, i + 1) for i in range(n - 1)]
    edges += [tuple(rng.sample(range(n), 2)) for _ in range(n // 2)]
    for a, b in edges:
        c = next(labels)
        sizes[c] = rng.randint(2, 9)
        terms[a].append(c)
        terms[b].append(c)
        if rng.random() < hyper:
            terms[rng.randrange(n)].append(c)
    out = []
    for _ in range(outputs):
        c = next(labels)
        sizes[c] = rng.randint(2, 9)
        terms[rng.randrange(n)].append(c)
        out.append(c)
    terms = ["".join(dict.fromkeys(t)) for t in terms]  # a label once per operand
    eq = ",".join(terms) + "->" + "".join(out)
    return eq, [tuple(sizes[c] for c in t) for t in terms]


def strategies(n):
    out = ["auto", "greedy", "dp", "branch-1"]
    if n <= 9:
        out.append("branch-2")
    if n <= 6:
        out += ["optimal", "branch-all"]
    return out


def main():
    cases = [(eq, shapes_of(eq, sizes)) for eq, sizes in CLASSIC]
    for n, seeds in ((3, 4), (4, 6), (5, 6), (6, 6), (7, 4), (8, 4), (10, 3), (12, 3), (16, 2)):
        for s in range(seeds):
            cases.append(random_network(n, seed=1000 * n + s))
    table = []
    for eq, shapes in cases:
        n = len(shapes)
        for strategy in strategies(n):
            for limit in (None, "max_input") if n <= 6 else (None,):
                try:
                    path, info = oe.contract_path(eq, *shapes, shapes=True, optimize=strategy, memory_limit=limit)
                except RuntimeError:  # dp finds no path under a memory limit: opt_einsum raises
                    continue
                table.append({
                    "equation": eq, "shapes": [list(s) for s in shapes], "optimize": strategy,
                    "memory_limit": limit, "path": [list(p) for p in path],
                    "naive_cost": int(info.naive_cost), "opt_cost": int(info.opt_cost),
                    "largest_intermediate": int(info.largest_intermediate),
                })
    json.dump({"generator": "tests/python/data/gen_einsum_opt_costs.py", "opt_einsum": oe.__version__,
               "entries": table}, fp=__import__("sys").stdout, indent=None, separators=(",", ":"))
    print()


if __name__ == "__main__":
    main()
