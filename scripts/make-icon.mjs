// Draws media/icon.png (128x128, the marketplace icon): a rounded tile with a plan (three lines)
// and a check mark. Plain Node (zlib for the PNG's deflate stream), so it needs no image tools.
// Run: node scripts/make-icon.mjs [output path]
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const SIZE = 128;
const SAMPLES = 4; // supersampling per axis, for smooth edges

const background = [0x3b, 0x5b, 0xdb];
const accent = [0x2f, 0xc4, 0x8d];
const white = [0xff, 0xff, 0xff];

function insideRoundedRect(x, y, left, top, right, bottom, radius) {
  if (x < left || x > right || y < top || y > bottom) return false;
  const cx = Math.min(Math.max(x, left + radius), right - radius);
  const cy = Math.min(Math.max(y, top + radius), bottom - radius);
  return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2;
}

function distanceToSegment(px, py, ax, ay, bx, by) {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

/** The colour at a sub-pixel point, or null for transparent. Later shapes paint over earlier ones. */
function shade(x, y) {
  let colour = null;
  if (insideRoundedRect(x, y, 4, 4, 124, 124, 24)) colour = background;
  // The plan: three lines of text.
  const lines = [
    [28, 36, 100],
    [28, 58, 88],
    [28, 80, 64],
  ];
  for (const [left, top, right] of lines) {
    if (insideRoundedRect(x, y, left, top - 5, right, top + 5, 5)) colour = white;
  }
  // The check mark, bottom right.
  const stroke = 7;
  if (distanceToSegment(x, y, 72, 90, 84, 102) <= stroke || distanceToSegment(x, y, 84, 102, 108, 72) <= stroke) colour = accent;
  return colour;
}

function pixels() {
  const data = Buffer.alloc(SIZE * (SIZE * 4 + 1));
  for (let y = 0; y < SIZE; y++) {
    const row = y * (SIZE * 4 + 1);
    data[row] = 0; // filter: none
    for (let x = 0; x < SIZE; x++) {
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = 0; sy < SAMPLES; sy++) {
        for (let sx = 0; sx < SAMPLES; sx++) {
          const c = shade(x + (sx + 0.5) / SAMPLES, y + (sy + 0.5) / SAMPLES);
          if (!c) continue;
          r += c[0];
          g += c[1];
          b += c[2];
          a += 1;
        }
      }
      const offset = row + 1 + x * 4;
      if (a > 0) {
        data[offset] = Math.round(r / a);
        data[offset + 1] = Math.round(g / a);
        data[offset + 2] = Math.round(b / a);
      }
      data[offset + 3] = Math.round((a / (SAMPLES * SAMPLES)) * 255);
    }
  }
  return data;
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(buffer) {
  let c = 0xffffffff;
  for (const byte of buffer) c = CRC_TABLE[(c ^ byte) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, body) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(body.length);
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), body]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(typed));
  return Buffer.concat([length, typed, crc]);
}

const header = Buffer.alloc(13);
header.writeUInt32BE(SIZE, 0);
header.writeUInt32BE(SIZE, 4);
header[8] = 8; // bit depth
header[9] = 6; // colour type: RGBA
header[10] = 0; // compression
header[11] = 0; // filter
header[12] = 0; // interlace

const png = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  chunk('IHDR', header),
  chunk('IDAT', deflateSync(pixels(), { level: 9 })),
  chunk('IEND', Buffer.alloc(0)),
]);

const output = process.argv[2] ?? new URL('../media/icon.png', import.meta.url);
writeFileSync(output, png);
console.log(`wrote ${output instanceof URL ? output.pathname : output} (${png.length} bytes)`);
