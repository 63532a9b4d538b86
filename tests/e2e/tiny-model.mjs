// tiny-model.mjs: a tiny llama2.c checkpoint and tokenizer for the e2e tests that load a model, so they
// run without the shared stories260K (ATTNVIZ_SHARED): deterministic weights, byte pieces plus ' ', 'a', ' a'.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A tiny checkpoint (dim 16, 2 layers, 4 heads, 2 KV heads, seq_len 128) and a byte-piece tokenizer,
 * written into dir: {model, tok} paths. */
export function tinyFiles(dir) {
  const [dim, hid, L, H, KV, V, S] = [16, 24, 2, 4, 2, 262, 128];
  const kvd = (dim / H) * KV;
  const floats = V * dim + L * dim + 2 * L * dim * dim + 2 * L * kvd * dim + L * dim + 3 * L * hid * dim + dim + S * (dim / H);
  const dv = new DataView(new ArrayBuffer(28 + 4 * floats));
  [dim, hid, L, H, KV, V, S].forEach((v, i) => dv.setInt32(4 * i, v, true));
  let x = 7;
  for (let i = 0; i < floats; i++) { x = (Math.imul(x, 1664525) + 1013904223) >>> 0; dv.setFloat32(28 + 4 * i, (x / 2 ** 32 - 0.5), true); }
  const enc = new TextEncoder(), parts = [Uint8Array.of(8, 0, 0, 0)];
  const pieces = ['<unk>', '\n<s>\n', '\n</s>\n', ...Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`), ' ', 'a', ' a'];
  pieces.forEach((p, i) => {
    const b = enc.encode(p), h = new DataView(new ArrayBuffer(8));
    h.setFloat32(0, i, true); h.setInt32(4, b.length, true);
    parts.push(new Uint8Array(h.buffer), b);
  });
  const tok = Buffer.concat(parts.map((p) => Buffer.from(p)));
  writeFileSync(join(dir, 'tiny.bin'), new Uint8Array(dv.buffer));
  writeFileSync(join(dir, 'tiny-tok.bin'), tok);
  return { model: join(dir, 'tiny.bin'), tok: join(dir, 'tiny-tok.bin') };
}
