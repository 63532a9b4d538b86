#!/usr/bin/python3
"""readouts_facts.py: the real-model facts of ../shared/data/stories260K/README.md through the CLI.

For heads L0H1, L1H3, L2H6 of the captured text128 tensors, runs
    attnviz readouts --variant softmax --causal --q text128_q.npy --k text128_k.npy --layer L --head H
with the fast route and with --accurate, and checks σ₁ (3 decimals), rank_rel_1e-3, rank_rel_1e-2,
rank_energy_99 and sparsity_lt_0.01 (3 decimals) against the README's table (built in float64).
Also checks, with numpy, the CLI's spectrum against numpy.linalg.svd of the README's exact attention
matrices (text128_att_selected.npy) and that the JSON holds no NaN/Inf.

Usage: /usr/bin/python3 tests/oracle/readouts_facts.py [path/to/attnviz]   (default build/native/attnviz)
Prints 'N passed, M failed'; exit status 1 on any failure, 0 with one SKIPPED line on stderr when the data
(ATTNVIZ_SHARED, default ../shared beside the repository) is absent.
"""
import json
import os
import subprocess
import sys

from shared_data import ROOT, skipped, stories_dir

DATA = stories_dir()

# head: (layer, query head, σ₁, rank at 1e-3·σ₁, rank at 1e-2·σ₁, 99%-energy rank, fraction < 0.01)
FACTS = {
    "L0H1": (0, 1, 1.752, 126, 109, 55, 0.838),
    "L1H3": (1, 3, 1.630, 120, 114, 91, 0.984),
    "L2H6": (2, 6, 2.399, 104, 67, 34, 0.849),
}
SELECTED = ["L0H1", "L1H3", "L2H6"]  # the first three slices of text128_att_selected.npy


def run_cli(binary, layer, head, accurate):
    args = [binary, "readouts", "--variant", "softmax", "--causal",
            "--q", os.path.join(DATA, "text128_q.npy"), "--k", os.path.join(DATA, "text128_k.npy"),
            "--layer", str(layer), "--head", str(head)]
    if accurate:
        args.append("--accurate")
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        raise RuntimeError("exit %d: %s" % (proc.returncode, proc.stderr.strip()))
    # strict JSON: Python's parser would accept NaN/Infinity, so reject them explicitly
    return json.loads(proc.stdout, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "native", "attnviz")
    if not os.path.isdir(DATA):
        skipped("oracle readouts_facts.py: stories260K facts of text128 heads L0H1, L1H3, L2H6")
        return 0
    try:
        import numpy as np
    except ImportError:
        np = None
    passed, failed = 0, []

    def check(name, ok, detail=""):
        nonlocal passed
        if ok:
            passed += 1
        else:
            failed.append(name + (": " + detail if detail else ""))

    att = None
    if np is not None:
        att = np.load(os.path.join(DATA, "text128_att_selected.npy")).astype(np.float64)
    for head, (layer, qh, s1, r3, r2, e99, sp) in FACTS.items():
        for accurate in (False, True):
            tag = "%s %s" % (head, "accurate" if accurate else "fast")
            try:
                r = run_cli(binary, layer, qh, accurate)
            except Exception as exc:  # a crash or bad JSON fails every check of this run
                check(tag + " runs", False, str(exc))
                continue
            check(tag + " route", r.get("route") == ("accurate" if accurate else "fast"), str(r.get("route")))
            check(tag + " sigma1", round(r["sigma1"], 3) == s1, "%r vs %r" % (r["sigma1"], s1))
            check(tag + " rank_rel_1e-3", r["rank_rel_1e-3"] == r3, "%r vs %r" % (r["rank_rel_1e-3"], r3))
            check(tag + " rank_rel_1e-2", r["rank_rel_1e-2"] == r2, "%r vs %r" % (r["rank_rel_1e-2"], r2))
            check(tag + " rank_energy_99", r["rank_energy_99"] == e99, "%r vs %r" % (r["rank_energy_99"], e99))
            check(tag + " sparsity_lt_0.01", round(r["sparsity_lt_0.01"], 3) == sp,
                  "%r vs %r" % (r["sparsity_lt_0.01"], sp))
            sv = r["singular_values"]
            check(tag + " descending", all(a >= b for a, b in zip(sv, sv[1:])))
            if att is not None:
                ref = np.linalg.svd(att[SELECTED.index(head)], compute_uv=False)
                err = np.max(np.abs(np.array(sv) - ref))
                # the README matrix is float64 rounded to float32, the CLI's is float32 computed:
                # they differ by float32 rounding, about 1e-7·σ₁
                check(tag + " spectrum vs numpy", err <= 2e-6 * ref[0], "max |Δσ| %.3g" % err)
    print("%d passed, %d failed" % (passed, len(failed)))
    for f in failed:
        print("FAILED " + f)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
