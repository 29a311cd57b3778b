#!/usr/bin/env node
// SPDX-License-Identifier: MIT
//
// Writes a large program (JSON) for the HTML report's browser test:
//
//   node gen-large.js LAYERS FAIL_LAYER > large.json
//
// A warm-up repeat of 1000 iterations; LAYERS layers of six phases, each
// phase its own launch and reference (6 * LAYERS instances), each
// declaring its fresh output and carrying the output before it, the
// outputs rotating through 16 workspace slots (so thousands of planes
// over a few slots); then 64 identical decode references.  In layer
// FAIL_LAYER (-1: none) the last phase also carries the output of its
// second phase, whose slot the fourth phase's output takes in between:
// (D) fails there, deep in the walk.
'use strict';

const LAYERS = +(process.argv[2] || 500), FAIL = +(process.argv[3] || -1);
const OPS = ['norm', 'qkv', 'attn', 'proj', 'up', 'down'];
const SLOT = 0x10000, BASE = 0x40000000;

const hex = (n) => '0x' + n.toString(16);
const out = (i, k) => `L${i}.${OPS[k]}`;
const slot = (i, k) => (i === FAIL && k === 3 ? (6 * i + 1) % 16 : (6 * i + k) % 16);
const plane = (i, k, carried) =>
  ({ name: out(i, k), offset: hex(BASE + slot(i, k) * SLOT), size: SLOT, carried });

const phases = [
  { identity: 'warm.a', planes: [{ name: 'scratch', offset: hex(BASE), size: SLOT, carried: false }] },
  { identity: 'warm.b', planes: [{ name: 'scratch', offset: hex(BASE), size: SLOT, carried: true }] },
];
const launches = [
  { phase: 'warm.a', words: [hex(BASE)] },
  { phase: 'warm.b', words: [hex(BASE)] },
];
const schedule = [{ first: 0, count: 2 }];

for (let i = 0; i < LAYERS; i++) {
  for (let k = 0; k < 6; k++) {
    const planes = [plane(i, k, false)];
    if (i > 0 || k > 0) planes.push(plane(k ? i : i - 1, k ? k - 1 : 5, true));
    if (i === FAIL && k === 5) planes.push(plane(i, 1, true));
    phases.push({ identity: out(i, k), planes });
    schedule.push({ first: launches.length, count: 1 });
    launches.push({ phase: out(i, k), words: [planes[0].offset, '0x5000'] });
  }
}

// decoding: one phase reading the last output, 64 identical references
const last = plane(LAYERS - 1, 5, true);
phases.push({ identity: 'decode', planes: [last, { name: 'token', offset: hex(BASE + 16 * SLOT), size: 64, carried: false }] });
const decode = launches.length;
launches.push({ phase: 'decode', words: [last.offset] });
for (let t = 0; t < 64; t++) schedule.push({ first: decode, count: 1 });

process.stdout.write(JSON.stringify({
  format: 'arena-program/1',
  alignment: 64,
  windows: [
    { name: 'params', base: '0x10000000', size: '0x100000' },
    { name: 'workspace', base: hex(BASE), size: hex(17 * SLOT) },
  ],
  globals: [{ name: 'weights', offset: '0x10000000', size: '0x100000' }],
  phases, launches,
  repeats: [{ first: 0, count: 2, iterations: 1000 }],
  schedule,
}) + '\n');
