"""numpy_side.py: the numpy side of bench/spectrum.mjs, a child process that times numpy on request so the
benchmark can alternate between WASM and numpy (drift on a shared machine then hits both sides).

Reads one JSON command per line on stdin, answers one JSON line on stdout:
  {"cmd": "info"}                                  -> numpy's version, the BLAS/LAPACK it loaded, threads
  {"cmd": "load", "n": n, "file": path}            -> reads the n×n float32 matrix (float64 from here on),
                                                      answers its singular values (svd) once
  {"cmd": "time", "n": n, "what": W, "calls": k}   -> k wall times in ms of W on that matrix:
       "svd"       np.linalg.svd(M, compute_uv=False)
       "eigvalsh"  np.linalg.eigvalsh(M @ M.T): numpy's own Gram route, the product included
Run by /usr/bin/python3 with OPENBLAS_NUM_THREADS=1 (the numpy people use: OpenBLAS, one thread here).
"""
import json
import os
import sys
import time

import numpy as np


def loaded_libraries():
    """The BLAS/LAPACK shared objects this process has mapped, resolved through Debian's alternatives."""
    libs = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            name = os.path.basename(path).lower()
            if any(k in name for k in ("blas", "lapack", "mkl", "blis", "flexiblas")):
                libs.add(os.path.realpath(path))
    return sorted(libs)


def main():
    mats = {}
    for line in sys.stdin:
        cmd = json.loads(line)
        if cmd["cmd"] == "info":
            np.linalg.svd(np.eye(4), compute_uv=False)  # make sure LAPACK is loaded
            libs = loaded_libraries()
            kind = "OpenBLAS" if any("openblas" in p for p in libs) else "reference BLAS/LAPACK" \
                if any("/blas/" in p or "/lapack/" in p for p in libs) else "unknown"
            out = {"numpy": np.__version__, "blas_lapack": kind, "libraries": libs,
                   "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS")}
        elif cmd["cmd"] == "load":
            n = cmd["n"]
            M = np.fromfile(cmd["file"], dtype=np.float32).reshape(n, n).astype(np.float64)
            mats[n] = M
            out = {"sv": np.linalg.svd(M, compute_uv=False).tolist()}
            np.linalg.eigvalsh(M @ M.T)  # warm-up of the other side
        elif cmd["cmd"] == "time":
            M = mats[cmd["n"]]
            fn = (lambda: np.linalg.svd(M, compute_uv=False)) if cmd["what"] == "svd" \
                else (lambda: np.linalg.eigvalsh(M @ M.T))
            samples = []
            for _ in range(cmd["calls"]):
                t0 = time.perf_counter()
                fn()
                samples.append(1e3 * (time.perf_counter() - t0))
            out = {"ms": samples}
        else:
            out = {"error": f"unknown command {cmd['cmd']}"}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
