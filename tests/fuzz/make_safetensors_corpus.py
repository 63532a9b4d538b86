#!/usr/bin/env python3
"""make_safetensors_corpus.py: writes the seeds of fuzz_safetensors into tests/fuzz/corpus_safetensors/:
valid files (each dtype, scalars, zero-size tensors, metadata, escaped names) and near misses (overlap,
gap, unknown dtype, overflowing shape, truncated). Standard library only; deterministic."""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_safetensors")


def st(header, data=b"", raw=None):
    h = (raw if raw is not None else json.dumps(header, separators=(",", ":"))).encode()
    return struct.pack("<Q", len(h)) + h + data


def main():
    os.makedirs(OUT, exist_ok=True)
    f32 = struct.pack("<6f", 1, -2, 0.5, 3e-39, float("inf"), -0.0)
    seeds = {
        "valid_f32": st({"w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}, f32),
        "valid_mixed": st({"__metadata__": {"format": "pt"},
                           "a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]},
                           "b": {"dtype": "F16", "shape": [], "data_offsets": [4, 6]},
                           "z": {"dtype": "F16", "shape": [0, 7], "data_offsets": [6, 6]}},
                          b"\x80\x3f\x00\xc0\x01\x00"),
        "valid_escapes": st(None, b"\x00\x3c", raw='{"a\\u00e9\\ud83d\\ude00\\n":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}}  '),
        "valid_empty": st({}),
        "bad_overlap": st({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                           "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, bytes(8)),
        "bad_gap": st({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, bytes(8)),
        "bad_dtype": st({"a": {"dtype": "I64", "shape": [1], "data_offsets": [0, 8]}}, bytes(8)),
        "bad_overflow": st({"a": {"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 4]}}, bytes(4)),
        "bad_4gb": struct.pack("<Q", 1 << 32) + b"{}",
    }
    seeds["bad_truncated"] = seeds["valid_mixed"][:-3]
    for name, b in seeds.items():
        with open(os.path.join(OUT, name + ".safetensors"), "wb") as fh:
            fh.write(b)


if __name__ == "__main__":
    main()
