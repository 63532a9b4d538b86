#!/usr/bin/env python3
"""make_json_corpus.py: writes the seeds of fuzz_json into tests/fuzz/corpus_json/: valid documents shaped
like the Hugging Face files (a config.json, a shard index, a tokenizer.json fragment with escapes and
surrogate pairs), numbers at the edges of double and int64, nesting at the limit, and near misses (a
trailing comma, a lone surrogate, overlong UTF-8, depth 65, a BOM). Standard library only; deterministic."""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_json")


def main():
    os.makedirs(OUT, exist_ok=True)
    config = {"architectures": ["LlamaForCausalLM"], "hidden_size": 576, "num_attention_heads": 9,
              "num_key_value_heads": 3, "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "rope_scaling": None,
              "tie_word_embeddings": True, "torch_dtype": "bfloat16", "vocab_size": 49152}
    index = {"metadata": {"total_size": 2471645608},
             "weight_map": {"model.embed_tokens.weight": "model-00001-of-00002.safetensors",
                            "model.layers.0.mlp.down_proj.weight": "model-00002-of-00002.safetensors"}}
    tok = ('{"version":"1.0","added_tokens":[{"id":0,"content":"<|endoftext|>","special":true}],'
           '"model":{"type":"BPE","vocab":{"\\u0120the":262,"\u00c4\u0142":1,"\\ud83d\\ude00":2,"a\\"b\\\\c\\/\\b\\f\\n\\r\\t":3},'
           '"merges":["\u0120 t","h e"]}}')
    seeds = {
        "valid_config": json.dumps(config, indent=2).encode(),
        "valid_index": json.dumps(index).encode(),
        "valid_tokenizer": tok.encode(),
        "valid_numbers": b"[0,-0,1e308,1E-5,0.5,-2.5e+2,9007199254740993,9223372036854775807,"
                         b"-9223372036854775808,1e400,4.9e-324,123456789012345678901234567890.5e-3]",
        "valid_deep": b"[" * 63 + b'{"k":1}' + b"]" * 63,
        "valid_scalars": b' \r\n\t"\\u0000" \n',
        "bad_trailing_comma": b'{"a":[1,2,],}',
        "bad_lone_surrogate": b'["\\ud800", "\\udc00"]',
        "bad_overlong": b'["\xc0\xaf", "\xe0\x80\xaf"]',
        "bad_depth65": b"[" * 65 + b"]" * 65,
        "bad_bom": b"\xef\xbb\xbf{}",
        "bad_numbers": b"[01, 1., .5, +1, NaN, Infinity]",
    }
    for name, data in seeds.items():
        with open(os.path.join(OUT, name + ".json"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
