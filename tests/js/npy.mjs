// npy.mjs: a minimal .npy reader for tests (float32/float64, little-endian, C order), independent of
// the C reader it helps check.
import { readFileSync } from 'node:fs';

/** @returns {{shape: number[], data: Float32Array|Float64Array}} */
export function readNpy(path) {
  const buf = readFileSync(path);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(`${path}: not a .npy file`);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const start = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', start, start + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error(`${path}: Fortran order`);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  const count = shape.reduce((a, b) => a * b, 1);
  const off = start + hlen;
  const bytes = buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + off + count * (descr === '<f8' ? 8 : 4));
  if (descr === '<f4') return { shape, data: new Float32Array(bytes) };
  if (descr === '<f8') return { shape, data: new Float64Array(bytes) };
  throw new Error(`${path}: dtype ${descr}`);
}
