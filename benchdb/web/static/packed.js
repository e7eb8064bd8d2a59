// The static site's files that hold many results or series (benchdb/web/packed.py writes them): which
// file holds an id, and one result's raw samples decoded from a samples file, as the server's samples
// view sends them, with how far each quantised value may lie from the measured one.
"use strict";

const PACKED = (() => {
  const ENCODER = new TextEncoder();

  // FNV-1a of the id's UTF-8 bytes, modulo the number of files (packed.shard_of).
  function shardOf(key, shards) {
    let h = 0x811c9dc5;
    for (const b of ENCODER.encode(key)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
    return h % shards;
  }

  const STEPS = 65535;

  function column(buf, param, n) {
    const [kind] = param;
    if (kind === "const") return new Array(n).fill(param[1]);
    if (kind === "f64") return Array.from(new Float64Array(buf, param[1], n), (v) => (Number.isFinite(v) ? v : null));
    const [, lo, hi, at] = param;
    const q = new Uint16Array(buf, at, n);
    if (kind === "log") {
      const span = Math.log(hi / lo);
      return Array.from(q, (s) => lo * Math.exp((s / STEPS) * span));
    }
    return Array.from(q, (s) => lo + ((hi - lo) * s) / STEPS);
  }

  // How far a decoded value may lie from the measured one: relative for log, absolute for lin.
  const bound = (param) => (param[0] === "log" ? (param[2] / param[1]) ** (1 / (2 * STEPS)) - 1
    : param[0] === "lin" ? (param[2] - param[1]) / (2 * STEPS) : 0);

  // One result of a samples file: the samples view's document, or null when the file lacks it.
  function samples(data, result) {
    const view = new DataView(data);
    if (String.fromCharCode(...new Uint8Array(data, 0, 4)) !== "BDBS") throw new Error("not a benchdb samples file");
    const size = view.getUint32(4, true);
    const header = JSON.parse(new TextDecoder().decode(new Uint8Array(data, 8, size)));
    const entry = header.results[result];
    if (!entry) return null;
    const body = data.slice(8 + size);
    const rows = [];
    // per metric, the worst error of its values' codec (relative or absolute), and of t_offset_s
    const quantised = {};
    for (const [metric, unit, repeat, n, it, vParam, tParam] of entry.segments) {
      const its = it[0] === "from" ? Array.from({ length: n }, (_, k) => it[1] + k) : Array.from(new Int32Array(body, it[1], n));
      const ts = column(body, tParam, n), vs = column(body, vParam, n);
      for (let k = 0; k < n; k++) rows.push([metric, unit, repeat, its[k], ts[k], vs[k]]);
      const q = (quantised[metric] ??= { unit, relative: 0, absolute: 0, t_offset_s: 0 });
      if (vParam[0] === "log") q.relative = Math.max(q.relative, bound(vParam));
      if (vParam[0] === "lin") q.absolute = Math.max(q.absolute, bound(vParam));
      q.t_offset_s = Math.max(q.t_offset_s, bound(tParam));
    }
    return { columns: header.columns, rows, truncated: entry.truncated, statistics: entry.statistics,
             command: entry.command, quantised };
  }

  return { shardOf, samples };
})();
