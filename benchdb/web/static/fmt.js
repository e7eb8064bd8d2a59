// How the dashboard shows a quantity and names a column: the rules of benchdb/formatting.py, written once
// for the browser. A column shares one unit (s / ms / µs / ns; B / KiB / MiB / GiB) chosen by its
// typical (median) value (each value its own unit where they span more than 1000x); its typical value
// gets 4 significant digits, and more decimals (up to 9)
// while two different values would print the same. Changes are signed percentages (+1.2%).
"use strict";

const FMT = (() => {
  const TIME = [[1, "s"], [1e3, "ms"], [1e6, "µs"], [1e9, "ns"]];
  const SIZE = [[1 / 2 ** 30, "GiB"], [1 / 2 ** 20, "MiB"], [1 / 2 ** 10, "KiB"], [1, "B"]];
  const MAX_DECIMALS = 9;
  const SPAN = 1000;   // a column whose values span more shows each value in its own unit

  const finite = (v) => typeof v === "number" && Number.isFinite(v);
  function typical(values) {
    const sizes = values.filter((v) => v !== 0).map(Math.abs).sort((a, b) => a - b);
    return sizes.length ? sizes[Math.floor(sizes.length / 2)] : 0;
  }
  // A number as Python's format(v, ",.Nf") prints it: the exact binary value rounded, ties to even
  // (toFixed rounds ties up; Intl rounds the shortest decimal, so 12.35 would become 12.4), a "-" on
  // anything negative, "+" where signed, thousands grouped.
  function pyFixed(v, dec, grouped, signed) {
    const a = Math.abs(v);
    let text = a >= 1e21 ? BigInt(a).toString() + (dec ? "." + "0".repeat(dec) : "") : a.toFixed(dec);
    if (a < 1e21) {
      const full = a.toFixed(100), dot = full.indexOf(".");
      const head = full.slice(0, dec ? dot + 1 + dec : dot), tail = full.slice(dot + 1 + dec);
      if (/^50*$/.test(tail) && Number(head[head.length - 1]) % 2 === 0) text = head;
    }
    if (grouped) text = text.replace(/^\d+/, (int) => int.replace(/\B(?=(\d{3})+$)/g, ","));
    const sign = v < 0 || Object.is(v, -0) ? "-" : signed ? "+" : "";
    return sign + text;
  }
  function decimals(values, factor, fixedDec, digits = 4) {
    const t = typical(values) * factor;
    let dec = fixedDec ?? (t === 0 ? 0 : Math.max(0, Math.min(MAX_DECIMALS, digits - 1 - Math.floor(Math.log10(t)))));
    const distinct = [...new Set(values)];
    while (dec < MAX_DECIMALS && new Set(distinct.map((v) => pyFixed(v * factor, dec, false, false))).size < distinct.length) dec++;
    return dec;
  }
  // A formatter: factor, unit ("%" against the number, any other after a space), decimals, a sign
  // (+1.2%; a change that rounds to nothing from below prints without one, as in Python).
  function scale(factor, unit, dec, signed) {
    return (v) => {
      if (v === null || v === undefined || Number.isNaN(v)) return "";
      if (!finite(v)) return String(v);
      const text = pyFixed(v * factor, dec, true, signed).replace(/^-(?=[0.,]*$)/, "");
      return unit === "%" ? text + "%" : unit ? `${text} ${unit}` : text;
    };
  }
  function pick(table, t) {
    for (const [f, u] of table) if (t * f >= 1) return [f, u];
    return table[table.length - 1];
  }
  const numbers = (values) => values.filter(finite);
  function spans(nums) {
    const sizes = nums.filter((v) => v !== 0).map(Math.abs);
    return sizes.length > 0 && Math.max(...sizes) > SPAN * Math.min(...sizes);
  }
  // units.time_scale: one unit for the column (each value its own where they span > SPAN, except on
  // an axis).
  function timeScale(values, axis = false) {
    const nums = numbers(values);
    if (spans(nums) && !axis) return (v) => (finite(v) ? timeScale([v])(v) : scale(1, "", 0)(v));
    const t = typical(nums);
    const [f, u] = t === 0 ? [1e3, "ms"] : pick(TIME, t);
    return scale(f, u, decimals(nums, f));
  }
  function sizeScale(values) {
    const nums = numbers(values);
    if (spans(nums)) return (v) => (finite(v) ? sizeScale([v])(v) : scale(1, "", 0)(v));
    const [f, u] = pick(SIZE, typical(nums));
    return scale(f, u, u === "B" ? 0 : decimals(nums, f, 1));
  }
  function rateScale(values, unit = "") {
    const nums = numbers(values);
    return scale(1, unit, decimals(nums, 1, typical(nums) >= 100 ? 1 : undefined));
  }
  // A count: the integer, as the reports print one.
  const count = (v) => (finite(v) ? String(Math.trunc(v)) : v === null || v === undefined ? "" : String(v));
  // units.scale(kind, values): kinds ms/time, mib/size, num, pct (a fraction, signed), points (already
  // in percent), ratio; and int, a count.
  function byKind(k, values) {
    const nums = numbers(values);
    if (k === "ms" || k === "time") return timeScale(nums);
    if (k === "mib" || k === "size") return sizeScale(nums);
    if (k === "pct") return scale(100, "%", decimals(nums, 100, 1), true);
    if (k === "points") return scale(1, "%", decimals(nums, 1, 1));
    if (k === "ratio") return scale(1, "", decimals(nums, 1, 2));
    if (k === "int") return count;
    return rateScale(nums);
  }
  // The kind of a column from its SQL name: seconds (_s, median, ..), bytes, a fraction that is a
  // change (margin, change), a CPU percentage, a count, else a plain number.
  function kind(col) {
    if (/_bytes$/.test(col)) return "size";
    if (/(^|_)(s|ms)$/.test(col) && !/_ms$/.test(col)) return "time";
    if (/^(median|p\d+|mean|min|max|median_ci_(low|high)|before_median|after_median)$/.test(col)) return "time";
    if (/(^|_)(margin|change|change_vs_previous|change_point_change)(_ci_(low|high))?$/.test(col)) return "pct";
    if (/_pct$/.test(col)) return "points";
    if (/(^n$|^n_|_n$|count|candidates|batch_size|repeats?$|runs|results|iteration|tokens|^ok$|failed|oom|timeout|invalid)/.test(col)) return "int";
    // how many of a thing: never 8.000
    if (/(^|_)(accelerators|devices|nodes|systems|types|checked|reproduced|disagreements|rank)$/.test(col)) return "int";
    return "num";
  }
  // One column's formatter over all its values.
  const column = (col, values) => byKind(kind(col), values);
  // units.quantity: one measured value in its stored unit (s, bytes, anything else a plain number with
  // that unit), on the scale it shares with ``others``.
  function quantity(v, unit, others = []) {
    if (v === null || v === undefined || Number.isNaN(v)) return "";
    const values = [v, ...others];
    if (unit === "s") return timeScale(values)(v);
    if (unit === "bytes") return sizeScale(values)(v);
    return rateScale(values, unit || "")(v);
  }
  // units.timestamp / a date alone: '2026-11-01 10:00 UTC', '2026-11-01'.
  function timestamp(iso) {
    if (iso === null || iso === undefined) return "";
    const d = new Date(iso);
    if (Number.isNaN(d.getTime())) return String(iso);
    if (!/[T ]\d\d:\d\d/.test(iso)) return String(iso).slice(0, 10);
    const utc = /(Z|[+-]\d\d:?\d\d)$/.test(iso);
    const s = utc ? d.toISOString() : String(iso).replace(" ", "T");
    return `${s.slice(0, 10)} ${s.slice(11, 16)}` + (utc ? " UTC" : "");
  }
  const date = (iso) => timestamp(iso).slice(0, 10);
  // units.clip_range / clip_note: the 0.5-99.5 % range a histogram shows (the samples at the
  // quantiles' lower ranks) and what it says under it.
  const CLIP = [0.5, 99.5];
  function clipRange(values, low = CLIP[0], high = CLIP[1]) {
    const nums = Float64Array.from(numbers(values)).sort();
    if (!nums.length) return [0, 0, 0];
    const last = nums.length - 1;
    const lo = nums[Math.floor((last * low) / 100)], hi = nums[Math.floor((last * high) / 100)];
    return [lo, hi, nums.filter((v) => v < lo || v > hi).length];
  }
  const clipNote = (outside, total, low = CLIP[0], high = CLIP[1]) =>
    `${low}-${high} % of samples shown` + (outside ? `; ${outside} of ${total} outside` : "");
  // An axis tick in the axis' unit: 4 significant digits, never exponent notation.
  const TICK = new Intl.NumberFormat("en", { maximumSignificantDigits: 4, roundingMode: "halfEven" });
  const tick = (v) => TICK.format(v);
  // Column headings in words (the view's SQL names stay in the JSON and the CSV).
  const WORDS = {
    model_id: "model", batch_size: "batch", input_shape: "input", hardware_name: "hardware",
    best_hardware: "best hardware", best_backend: "backend", best_mode: "mode", best_precision: "precision",
    best_value: "best", best_median_s: "best median", runner_up_hardware: "runner-up hardware",
    runner_up_backend: "runner-up backend", runner_up_value: "runner-up", margin: "margin",
    margin_ci_low: "margin 95 % CI low", margin_ci_high: "margin 95 % CI high", margin_verdict: "verdict",
    margin_basis: "margin from", best_result_id: "result", runner_up_result_id: "runner-up result",
    result_id: "result", run_id: "run", series_id: "series", run_started_at: "run started",
    started_at: "started", git_commit: "commit", relative_throughput: "relative throughput",
    rating: "rating (0-3)", rating_label: "rating", top_error: "most common error", model_type: "model type",
    median_s: "median", p90_s: "p90", p99_s: "p99", median_ci_low: "median 95 % CI low",
    median_ci_high: "median 95 % CI high", change_vs_previous: "change", change_point_change: "step at the change point",
    background_cpu_pct: "background CPU", validity_reasons: "why", peak_memory_bytes: "peak memory",
    previous_run_id: "compare with", change_id: "change id", change_status: "change point",
    timing_method: "timing", ci_method: "interval", throughput: "items/s", t_offset_s: "time offset",
  };
  // A heading never names a unit its cells do not use: every cell of a time or size column carries its
  // own unit, so the stored unit's suffix (_s, _bytes) is dropped.
  const label = (col) => WORDS[col]
    ?? (kind(col) === "time" || kind(col) === "size" ? col.replace(/_(s|bytes)$/, "") : col).replace(/_/g, " ");
  // Ids shortened the way git shortens a hash: each the shortest prefix, at least ``least`` characters,
  // that no other id of ``values`` shares (a UUIDv7's first 8 characters are its timestamp, so runs of
  // one day would all read the same).
  function shortIds(values, least = 8) {
    const ids = [...new Set(values.filter((v) => v !== null && v !== undefined).map(String))].sort();
    const common = (a, b) => {
      let i = 0;
      while (i < a.length && i < b.length && a[i] === b[i]) i++;
      return i;
    };
    const short = new Map(ids.map((id, i) => {
      const shared = Math.max(i > 0 ? common(ids[i - 1], id) : 0, i + 1 < ids.length ? common(id, ids[i + 1]) : 0);
      let n = Math.max(least, shared + 1);
      if (id[n - 1] === "-") n++;   // never end on a UUID's dash
      return [id, id.slice(0, n)];
    }));
    return (v) => short.get(String(v)) ?? String(v).slice(0, least);
  }
  // Recorded method names in words.
  const METHODS = { order_statistics: "distribution-free (order statistics)", host_clock: "host clock",
                    cuda_events: "CUDA events", hierarchical_bootstrap: "bootstrap across processes" };
  // A timestamp as units.timestamp prints it ('2026-11-01 10:00 UTC'), never '2026-11-01T10:00:00'.
  const words = (v) => METHODS[v] ?? (/^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(v) ? timestamp(v) : v);
  // Columns a view sends only to choose a link (runs: where a run's results are listed), never shown.
  const LINK_ONLY = new Set(["latest_results", "only_model"]);
  const shown = (columns) => columns.filter((c) => !LINK_ONLY.has(c));
  // The unit a column of seconds is shown in: { factor, unit }.
  function unitOf(values) {
    const t = typical(numbers(values));
    const [factor, unit] = t === 0 ? [1e3, "ms"] : pick(TIME, t);
    return { factor, unit };
  }
  return { column, label, words, shown, kind, unitOf, shortIds, scale: byKind, timeScale, sizeScale, rateScale, quantity,
           timestamp, date, clipRange, clipNote, tick,
           time: (v) => timeScale([v])(v), size: (v) => sizeScale([v])(v) };
})();
