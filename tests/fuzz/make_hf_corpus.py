#!/usr/bin/env python3
"""make_hf_corpus.py: writes the seeds of fuzz_hf into tests/fuzz/corpus_hf/. Each seed is two
little-endian 16-bit lengths (config.json, index), a byte (max_seq − 1), then config.json, the index and
one .safetensors file: tiny models of every architecture that bind (Llama with GQA, biases and llama3 RoPE,
Mistral, Qwen2, Qwen3, GPT-2 with and without "transformer.") in F32, F16 and BF16, and near misses (a NaN,
a missing tensor, a transposed shape, an unknown architecture, an index naming another shard).
Standard library only; deterministic."""
import json
import os
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_hf")
SIZE = {"F32": 4, "F16": 2, "BF16": 2}


def encode(v, dtype):
    if dtype == "F32":
        return struct.pack("<f", v)
    if dtype == "F16":
        return struct.pack("<e", v)
    return struct.pack("<I", struct.unpack("<I", struct.pack("<f", v))[0])[2:]  # the top half: exact here


def safetensors(tensors, dtype, nan_in=None):
    """tensors: [(name, shape)]; values small multiples of 1/8, exact in every dtype."""
    header, data, off = {"__metadata__": {"format": "pt"}}, b"", 0
    for k, (name, shape) in enumerate(tensors):
        count = 1
        for s in shape:
            count *= s
        vals = [((i * 5 + k) % 17 - 8) / 8.0 for i in range(count)]
        blob = b"".join(encode(v, dtype) for v in vals)
        if name == nan_in:
            nan = {"F32": b"\x00\x00\xc0\x7f", "F16": b"\x00\x7e", "BF16": b"\xc0\x7f"}[dtype]
            blob = nan + blob[len(nan):]
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [off, off + len(blob)]}
        data += blob
        off += len(blob)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def llama_tensors(D, F, H, KV, HS, V, L, qkv_bias=False, o_bias=False, qk_norm=False, tie=False, prefix="model."):
    t = [(prefix + "embed_tokens.weight", (V, D))]
    for l in range(L):
        p = "%slayers.%d." % (prefix, l)
        t += [(p + "input_layernorm.weight", (D,)), (p + "self_attn.q_proj.weight", (H * HS, D)),
              (p + "self_attn.k_proj.weight", (KV * HS, D)), (p + "self_attn.v_proj.weight", (KV * HS, D)),
              (p + "self_attn.o_proj.weight", (D, H * HS))]
        if qkv_bias:
            t += [(p + "self_attn.q_proj.bias", (H * HS,)), (p + "self_attn.k_proj.bias", (KV * HS,)),
                  (p + "self_attn.v_proj.bias", (KV * HS,))]
        if o_bias:
            t += [(p + "self_attn.o_proj.bias", (D,))]
        if qk_norm:
            t += [(p + "self_attn.q_norm.weight", (HS,)), (p + "self_attn.k_norm.weight", (HS,))]
        t += [(p + "post_attention_layernorm.weight", (D,)), (p + "mlp.gate_proj.weight", (F, D)),
              (p + "mlp.up_proj.weight", (F, D)), (p + "mlp.down_proj.weight", (D, F))]
    t += [(prefix + "norm.weight", (D,))]
    if not tie:
        t += [("lm_head.weight", (V, D))]
    return t


def gpt2_tensors(D, F, V, L, ctx, prefix):
    t = [(prefix + "wte.weight", (V, D)), (prefix + "wpe.weight", (ctx, D))]
    for l in range(L):
        p = "%sh.%d." % (prefix, l)
        t += [(p + "ln_1.weight", (D,)), (p + "ln_1.bias", (D,)), (p + "attn.bias", (1, 1, ctx, ctx)),
              (p + "attn.c_attn.weight", (D, 3 * D)), (p + "attn.c_attn.bias", (3 * D,)),
              (p + "attn.c_proj.weight", (D, D)), (p + "attn.c_proj.bias", (D,)),
              (p + "ln_2.weight", (D,)), (p + "ln_2.bias", (D,)),
              (p + "mlp.c_fc.weight", (D, F)), (p + "mlp.c_fc.bias", (F,)),
              (p + "mlp.c_proj.weight", (F, D)), (p + "mlp.c_proj.bias", (D,))]
    return t + [(prefix + "ln_f.weight", (D,)), (prefix + "ln_f.bias", (D,))]


def seed(config, tensors, dtype, max_seq=16, shard="model.safetensors", nan_in=None):
    c = json.dumps(config).encode()
    ix = json.dumps({"metadata": {"total_size": 0}, "weight_map": {n: shard for n, _ in tensors}}).encode()
    return struct.pack("<HHB", len(c), len(ix), max_seq - 1) + c + ix + safetensors(tensors, dtype, nan_in)


def main():
    os.makedirs(OUT, exist_ok=True)
    llama = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4,
             "intermediate_size": 6, "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1,
             "vocab_size": 8, "max_position_embeddings": 16, "rms_norm_eps": 1e-5, "bos_token_id": 1,
             "eos_token_id": [2, 3]}
    llama3 = dict(llama, attention_bias=True, tie_word_embeddings=True,
                  rope_scaling={"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                "high_freq_factor": 4.0, "original_max_position_embeddings": 8})
    mistral = {"architectures": ["MistralForCausalLM"], "hidden_size": 4, "intermediate_size": 6,
               "num_hidden_layers": 2, "num_attention_heads": 2, "num_key_value_heads": 2, "head_dim": 4,
               "vocab_size": 8, "max_position_embeddings": 32, "sliding_window": 5}
    qwen2 = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 4, "intermediate_size": 6,
             "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 8,
             "max_position_embeddings": 16, "tie_word_embeddings": True, "rope_theta": 1000000.0}
    qwen3 = {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 4, "intermediate_size": 6,
             "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 6,
             "vocab_size": 8, "max_position_embeddings": 16, "tie_word_embeddings": True,
             "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}}
    gpt2 = {"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2", "n_embd": 4, "n_layer": 1, "n_head": 2,
            "n_positions": 6, "n_inner": None, "vocab_size": 8, "activation_function": "gelu_new"}
    L = llama_tensors(4, 6, 2, 1, 2, 8, 1)
    seeds = {
        "llama_f32": seed(llama, L, "F32"),
        "llama3_bias_tied_bf16": seed(llama3, llama_tensors(4, 6, 2, 1, 2, 8, 1, qkv_bias=True, o_bias=True, tie=True),
                                      "BF16", max_seq=40),
        "mistral_f16": seed(mistral, llama_tensors(4, 6, 2, 2, 4, 8, 2, prefix=""), "F16"),
        "qwen2_bf16": seed(qwen2, llama_tensors(4, 6, 2, 1, 2, 8, 1, qkv_bias=True, tie=True), "BF16"),
        "qwen3_f32": seed(qwen3, llama_tensors(4, 6, 2, 1, 6, 8, 1, qk_norm=True, tie=True), "F32"),
        "gpt2_prefixed_f32": seed(gpt2, gpt2_tensors(4, 16, 8, 1, 6, "transformer."), "F32", max_seq=3),
        "gpt2_bare_f16": seed(gpt2, gpt2_tensors(4, 16, 8, 1, 6, ""), "F16"),
        "bad_nan_bf16": seed(llama, L, "BF16", nan_in="model.layers.0.mlp.up_proj.weight"),
        "bad_missing": seed(llama, L[:-2] + L[-1:], "F32"),
        "bad_shape": seed(llama, [(n, s[::-1]) if "k_proj" in n else (n, s) for n, s in L], "F32"),
        "bad_arch": seed(dict(llama, architectures=["Phi3ForCausalLM"], model_type="phi3"), L, "F32"),
        "bad_index_shard": seed(llama, L, "F32", shard="../model.safetensors"),
    }
    for name, data in seeds.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
