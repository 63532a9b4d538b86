#!/usr/bin/python3
"""Run the same CLI commands on two builds of attnviz and compare every output byte for byte.

usage: /usr/bin/python3 scripts/compare_builds.py BASE_BUILD HEAD_BUILD [--keep DIR]

Each BUILD is a folder holding `attnviz` (the CLI) and `registry_json` (scripts/registry_json.c linked
against the same libattnviz.a); scripts/compare-builds.sh makes both from two git revisions. The variants,
their forms (causal, linear, recurrent, chunkwise) and their knobs come from the base build's registry, so
a new variant or knob is covered without editing this file. For every variant, without and with --causal,
on a fixed synthetic Q/K/V (the base CLI's generator; the head's generator is compared separately):
  - matrix -o M.npy --out-o O.npy on every --path (quadratic, linear, recurrent, chunkwise),
  - readouts (the fast and the --accurate spectrum), sweep over each knob it reads, recall,
at its defaults and at each knob value the tests use (KNOB_VALUES; a knob missing there gets its default
plus one step). With stories260K under $ATTNVIZ_SHARED (default ../shared), also readouts --all-heads and
matrix on a head of text128, and capture and generate-text with the stories260K model; distill and
generate at fixed settings. Exit status, stdout, stderr and every written file are compared; the report
lists what differs (for .npy: how many entries and the largest difference). Exit 1 when anything differs.
"""
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True

# Values the tests pass (grep tests/ for the flag): the comparison runs each variant at each value of each
# knob it reads, one knob at a time, then the combinations in COMBOS.
KNOB_VALUES = {
    "scale": [0.3, 1.5],
    "p": [1.5, 6],
    "dwc_kernel": [3, 5],
    "s": [5, 8],
    "ef_kind": ["mean"],
    "ef_shared": [True],
    "m": [8, 64],
    "orthogonal": [True],
    "seed": [3, 7],
    "feature_eps": [1e-4, 0],
    "order": [1, 3, 4],
    "N": [3, 8],
    "landmarks": [6, 9],
    "iters": [0, 10],
    "decay": [0.7, 0.9],
    "window": [1, 5],
    "beta": [1, 1.5, 2],
    "chunk": [1, 7, 16],
}
COMBOS = [  # several knobs together, as the oracles run them
    {"variant": "linformer", "ef_kind": "mean", "ef_shared": True, "s": 5},
    {"variant": "performer", "orthogonal": True, "m": 64, "seed": 5},
    {"variant": "focused", "p": 6, "dwc_kernel": 3},
    {"variant": "softmax", "window": 5, "decay": 0.9},
    {"variant": "deltanet", "beta": 1, "decay": 0.9, "chunk": 7},
    {"variant": "retention", "decay": 0.8, "chunk": 7},
]
PATHS = ["quadratic", "linear", "recurrent", "chunkwise"]
GENERATORS = ["gaussian", "clustered", "local", "lowrank", "sink"]


def knob_args(registry, settings):
    """CLI arguments of {knob key: value}."""
    flags = {k["key"]: k for k in registry["knobs"]}
    args = []
    for key, value in settings.items():
        if key == "variant":
            continue
        k = flags[key]
        if k["type"] == "bool":
            args.append(k["flag"] if value else "--no-" + k["flag"][2:])
        else:
            args += [k["flag"], str(value)]
    return args


def fallback_values(knob):
    """A knob no test names yet: its default plus one step, inside its range."""
    if knob["type"] == "bool":
        return [True]
    if knob["type"] == "enum":
        return knob["options"][1:]
    v = knob["def"] + knob["step"]
    v = min(v, knob["hi"]) if knob["hi_rule"] == "fixed" else v
    return [int(v) if knob["type"] == "int" else v]


def settings_of(registry):
    """(label, {knob: value}, causal) for every variant: defaults, one knob at a time, the combinations."""
    knobs = {k["key"]: k for k in registry["knobs"]}
    out = []
    for v in registry["variants"]:
        name = v["name"]
        causals = [True] if v["causal_only"] else [False, True] if v["causal"] else [False]
        reads = list(v["knobs"]) + (["scale"] if v["scaled"] else [])
        each = [{}]
        for key in reads:
            for value in KNOB_VALUES.get(key) or fallback_values(knobs[key]):
                each.append({key: value})
        each += [{k: c[k] for k in c if k != "variant"} for c in COMBOS if c["variant"] == name]
        for s, causal in itertools.product(each, causals):
            if not causal and any(knobs[k]["needs_causal"] for k in s):
                continue  # a rejected value: once is enough, checked below
            label = "_".join([name] + [f"{k}={val}" for k, val in s.items()] + (["causal"] if causal else []))
            out.append((label, dict(s, variant=name), causal))
        # one rejection per variant: the exit status and message of an error are behaviour too
        out.append((name + "_rejected_decay_noncausal", {"variant": name, "decay": 0.5}, False))
    return out


class Runner:
    def __init__(self, root, builds):
        self.root, self.builds = root, builds  # builds: {"base": folder, "head": folder}

    def run(self, case, argv, outputs=()):
        """Run `attnviz argv` on both builds in case folders; OUT/ in argv is that build's folder."""
        for side, build in self.builds.items():
            folder = os.path.join(self.root, side, case)
            os.makedirs(folder, exist_ok=True)
            args = [a.replace("OUT/", folder + "/") for a in argv]
            p = subprocess.run([os.path.join(build, "attnviz"), *args], capture_output=True, cwd=folder)
            with open(os.path.join(folder, "status"), "wb") as f:
                f.write(b"exit %d\n" % p.returncode)
            with open(os.path.join(folder, "stdout"), "wb") as f:
                f.write(p.stdout)
            with open(os.path.join(folder, "stderr"), "wb") as f:
                f.write(p.stderr.replace(folder.encode(), b"OUT"))


def describe(a, b):
    """One line on how two differing files differ."""
    if a.endswith(".npy"):
        try:
            x, y = np.load(a), np.load(b)
            if x.shape != y.shape or x.dtype != y.dtype:
                return f"shape {x.shape} {x.dtype} against {y.shape} {y.dtype}"
            x64, y64 = x.astype(np.float64), y.astype(np.float64)
            same = (x64 == y64) | (np.isnan(x64) & np.isnan(y64))
            diff = np.abs(x64 - y64)[~same]
            return f"{int((~same).sum())} of {x.size} entries differ, largest by {diff.max():.3g}"
        except ValueError as e:
            return f"unreadable: {e}"
    with open(a, "rb") as f:
        ta = f.read().decode(errors="replace").splitlines()
    with open(b, "rb") as f:
        tb = f.read().decode(errors="replace").splitlines()
    for i, (la, lb) in enumerate(itertools.zip_longest(ta, tb, fillvalue="<none>")):
        if la != lb:
            return f"line {i + 1}: {la[:90]!r} against {lb[:90]!r}"
    return "the bytes differ"


def compare(root):
    """(files compared, [lines on the files that differ or exist on one side])."""
    base, head = os.path.join(root, "base"), os.path.join(root, "head")
    files = set()
    for side in (base, head):
        for d, _, names in os.walk(side):
            files |= {os.path.relpath(os.path.join(d, n), side) for n in names}
    bad = []
    for rel in sorted(files):
        a, b = os.path.join(base, rel), os.path.join(head, rel)
        if not os.path.exists(a) or not os.path.exists(b):
            bad.append(f"{rel}: only in {'head' if os.path.exists(b) else 'base'}")
            continue
        with open(a, "rb") as fa, open(b, "rb") as fb:
            if fa.read() != fb.read():
                bad.append(f"{rel}: {describe(a, b)}")
    return len(files), bad


def main():
    argv = sys.argv[1:]
    keep = None
    if "--keep" in argv:
        i = argv.index("--keep")
        keep = argv[i + 1]
        del argv[i:i + 2]
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    builds = {"base": os.path.abspath(argv[0]), "head": os.path.abspath(argv[1])}
    root = keep or tempfile.mkdtemp(prefix="attnviz-compare-")
    os.makedirs(root, exist_ok=True)
    try:
        return compare_builds(root, builds)
    finally:
        if not keep:
            shutil.rmtree(root, ignore_errors=True)


def compare_builds(root, builds):
    regs = {}
    for side, build in builds.items():
        text = subprocess.run([os.path.join(build, "registry_json")], capture_output=True, check=True).stdout
        regs[side] = json.loads(text)
    # a section the head's registry adds (a new table) is an addition, not a change: it is named below;
    # every section the base has is compared as it is
    added = [k for k in regs["head"] if k not in regs["base"]]
    for side in builds:
        os.makedirs(os.path.join(root, side, "registry"), exist_ok=True)
        with open(os.path.join(root, side, "registry", "registry.json"), "w") as f:
            json.dump({k: v for k, v in regs[side].items() if k not in added}, f, indent=1)
    reg = regs["base"]
    r = Runner(root, builds)
    r.run("help", ["--help"])

    # inputs: generated by the base CLI (the head's generator is compared as an output of its own)
    inputs = os.path.join(root, "inputs")
    os.makedirs(inputs, exist_ok=True)
    base_cli = os.path.join(builds["base"], "attnviz")
    sets = {}
    for name, gen, n, d, std, seed in (("g37", "gaussian", 37, 13, 0.8, 7), ("c130", "clustered", 130, 16, 1.0, 3)):
        folder = os.path.join(inputs, name)
        subprocess.run([base_cli, "generate", "--gen", gen, "--n", str(n), "--d", str(d), "--std", str(std),
                        "--seed", str(seed), "-o", folder], check=True, capture_output=True)
        sets[name] = ["--q", f"{folder}/q.npy", "--k", f"{folder}/k.npy", "--v", f"{folder}/v.npy"]
    rng = np.random.default_rng(2024)  # a hedgehog W (d x cols), as the oracle passes one
    np.save(os.path.join(inputs, "w13x5.npy"), (0.5 * rng.standard_normal((13, 5))).astype(np.float32))
    for gen in GENERATORS:
        r.run(f"generate_{gen}", ["generate", "--gen", gen, "--n", "29", "--d", "7", "--seed", "11", "-o", "OUT/g"])

    cases = settings_of(reg)
    for label, s, causal in cases:
        args = knob_args(reg, s) + ["--variant", s["variant"]] + (["--causal"] if causal else [])
        for set_name, files in sets.items():
            if set_name != "g37" and len(s) > 2:
                continue  # the large set at defaults and one knob at a time only
            case = f"{set_name}/{label}"
            for path in PATHS:
                r.run(f"{case}/matrix_{path}", ["matrix", *args, *files, "-o", "OUT/M.npy", "--out-o", "OUT/O.npy",
                                                "--path", path])
            r.run(f"{case}/readouts", ["readouts", *args, *files])
            r.run(f"{case}/readouts_accurate", ["readouts", *args, *files, "--accurate", "--tau", "0.2"])
        v = next(x for x in reg["variants"] if x["name"] == s["variant"])
        if causal == v["causal_only"]:  # recall takes no --causal: once per setting
            r.run(f"recall/{label}", ["recall", *knob_args(reg, s), "--variant", s["variant"], "--pairs", "9",
                                      "--d", "6", "--seeds", "3"])
    hedgehog_w = ["--hedgehog-w", os.path.join(inputs, "w13x5.npy")]
    for causal in (False, True):
        extra = ["--causal"] if causal else []
        r.run(f"g37/hedgehog_given_w{'_causal' if causal else ''}/matrix",
              ["matrix", "--variant", "hedgehog", *extra, *sets["g37"], *hedgehog_w, "-o", "OUT/M.npy",
               "--out-o", "OUT/O.npy", "--path", "linear"])
        r.run(f"g37/hedgehog_given_w{'_causal' if causal else ''}/readouts",
              ["readouts", "--variant", "hedgehog", *extra, *sets["g37"], *hedgehog_w])

    # Hedgehog distillation (Adam on W), without and with the mask
    for causal in (False, True):
        r.run(f"distill{'_causal' if causal else ''}", ["distill", *sets["g37"], *(["--causal"] if causal else []),
                                                        "--steps", "5", "-o", "OUT/W.npy"])

    # sweeps: each variant over each knob it reads, every readout, three seeds
    for v in reg["variants"]:
        extra = ["--causal"] if v["causal"] else []
        for key in v["knobs"]:
            k = next(x for x in reg["knobs"] if x["key"] == key)
            if k["type"] in ("bool", "enum"):
                continue
            values = [x for x in (KNOB_VALUES.get(key) or fallback_values(k)) if not isinstance(x, bool)]
            r.run(f"sweep/{v['name']}_{key}", ["sweep", "--variant", v["name"], *extra, "--knob", key, "--values",
                                               ",".join(map(str, values)), "--seeds", "3", "--readouts", "all",
                                               *sets["g37"]])

    # stories260K's text128 (every layer and head), when the shared data is there
    shared = os.environ.get("ATTNVIZ_SHARED") or os.path.join(os.path.dirname(__file__), "..", "..", "shared")
    stories = os.path.join(shared, "data", "stories260K")
    if os.path.exists(os.path.join(stories, "text128_q.npy")):
        files = ["--q", f"{stories}/text128_q.npy", "--k", f"{stories}/text128_k.npy", "--v", f"{stories}/text128_v.npy"]
        for v in reg["variants"]:
            for causal in ([True] if v["causal_only"] else [False, True] if v["causal"] else [False]):
                extra = ["--causal"] if causal else []
                case = f"text128/{v['name']}{'_causal' if causal else ''}"
                r.run(f"{case}/readouts_all_heads", ["readouts", "--variant", v["name"], *extra, *files, "--all-heads"])
                r.run(f"{case}/matrix_l2h3", ["matrix", "--variant", v["name"], *extra, *files, "--layer", "2",
                                             "--head", "3", "-o", "OUT/M.npy", "--out-o", "OUT/O.npy"])
        model = ["--model", f"{stories}/stories260K.bin", "--tokenizer", f"{stories}/tok512.bin"]
        if os.path.exists(os.path.join(stories, "stories260K.bin")):  # the forward pass and the tokenizer
            r.run("model/capture", ["capture", *model, "--text", "Once upon a time, a cat sat.", "-o", "OUT/cap"])
            r.run("model/generate_text", ["generate-text", *model, "--text", "Lily went", "--steps", "24"])
        stories_note = "text128 included"
    else:
        stories_note = f"text128 skipped: {stories} not found (set ATTNVIZ_SHARED)"

    count, bad = compare(root)
    if {k: v for k, v in regs["head"].items() if k not in added} != regs["base"]:
        bad.insert(0, "the registries differ (registry/registry.json)")
    print(f"compared {count} outputs of {len(reg['variants'])} variants, {len(cases)} settings; {stories_note}")
    if added:
        print("added    the head's registry adds " + ", ".join(added) + " (not in the base's: not compared)")
    for line in bad:
        print("DIFFERS  " + line)
    print(f"{len(bad)} outputs differ" if bad else "identical: every output is the same, byte for byte")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
