// .npy files for the ONNX Runtime scripts (ort_bench.js, ort_outputs.js):
// readNpy gives {type, shape, data} as an ort.Tensor takes them (C order;
// float32, float16, float64, int64, int32, uint8, int8, bool), writeNpy
// writes an output's dims and typed array back.
'use strict';
const fs = require('fs');

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error(file + ': not a .npy file');
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  const fortran = /'fortran_order':\s*(True|False)/.exec(header)[1];
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header)[1]
    .split(',').map(s => s.trim()).filter(s => s.length).map(Number);
  if (fortran !== 'False') throw new Error(file + ': only C-order arrays supported');
  const types = { '<f4': ['float32', Float32Array], '<f2': ['float16', Uint16Array], '<i8': ['int64', BigInt64Array],
    '<i4': ['int32', Int32Array], '|u1': ['uint8', Uint8Array], '|i1': ['int8', Int8Array], '|b1': ['bool', Uint8Array],
    '<f8': ['float64', Float64Array] };
  if (!(descr in types)) throw new Error(file + ': unsupported dtype ' + descr);
  const [type, Arr] = types[descr];
  const off = hstart + hlen;
  const n = shape.reduce((a, b) => a * b, 1);
  const data = new Arr(n);
  Buffer.from(data.buffer).set(buf.subarray(off, off + Arr.BYTES_PER_ELEMENT * n));
  return { type, shape, data };
}

const DESCR = { float32: '<f4', float16: '<f2', int64: '<i8', int32: '<i4', uint8: '|u1', int8: '|i1', bool: '|b1',
  float64: '<f8' };

function writeNpy(file, shape, data, type) {
  if (!(type in DESCR)) throw new Error('output of type ' + type + ' not supported');
  const shp = '(' + shape.join(', ') + (shape.length === 1 ? ',' : '') + ')';
  let header = "{'descr': '" + DESCR[type] + "', 'fortran_order': False, 'shape': " + shp + ', }';
  const pad = 64 - ((10 + header.length + 1) % 64);
  header += ' '.repeat(pad % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.write('\x93NUMPY', 0, 'latin1');
  pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'),
    Buffer.from(data.buffer, data.byteOffset, data.byteLength)]));
}

module.exports = { readNpy, writeNpy };
