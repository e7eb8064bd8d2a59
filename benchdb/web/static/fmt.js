// How the dashboard shows a quantity and names a column: the rules of benchdb/units.py, written once
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
  function decimals(values, factor, fixed) {
    const t = typical(values) * factor;
    let dec = fixed ?? (t === 0 ? 0 : Math.max(0, Math.min(MAX_DECIMALS, 3 - Math.floor(Math.log10(t)))));
    const distinct = [...new Set(values)];
    while (dec < MAX_DECIMALS && new Set(distinct.map((v) => (v * factor).toFixed(dec))).size < distinct.length) dec++;
    return dec;
  }
  function scale(factor, unit, dec, signed) {
    const nf = new Intl.NumberFormat("en", { minimumFractionDigits: dec, maximumFractionDigits: dec,
                                             signDisplay: signed ? "exceptZero" : "auto" });
    return (v) => {
      if (v === null || v === undefined) return "";
      if (!finite(v)) return String(v);
      const text = nf.format(v * factor).replace(/^-(?=[0.,]*$)/, "");
      return unit === "%" ? text + "%" : unit ? `${text} ${unit}` : text;
    };
  }
  function pick(table, t) {
    for (const [f, u] of table) if (t * f >= 1) return [f, u];
    return table[table.length - 1];
  }
  // The kind of a column from its SQL name: seconds (_s, median, ..), bytes, a fraction that is a
  // change (margin, change), a CPU percentage, a count, else a plain number.
  function kind(col) {
    if (/_bytes$/.test(col)) return "size";
    if (/(^|_)(s|ms)$/.test(col) && !/_ms$/.test(col)) return "time";
    if (/^(median|p\d+|mean|min|max|median_ci_(low|high)|before_median|after_median)$/.test(col)) return "time";
    if (/(^|_)(margin|change|change_vs_previous|change_point_change)(_ci_(low|high))?$/.test(col)) return "pct";
    if (/_pct$/.test(col)) return "points";
    if (/(^n$|_n$|count|candidates|batch_size|repeats|runs|results|iteration|tokens|^ok$|failed|oom|timeout|invalid)/.test(col)) return "int";
    return "num";
  }
  // One column's formatter over all its values.
  function column(col, values) {
    const nums = values.filter(finite);
    const k = kind(col);
    const sizes = nums.filter((v) => v !== 0).map(Math.abs);
    const spans = sizes.length && Math.max(...sizes) > SPAN * Math.min(...sizes);
    if ((k === "time" || k === "size") && spans) return (v) => (finite(v) ? column(col, [v])(v) : column(col, [])(v));
    if (k === "time") {
      const t = typical(nums);
      const [f, u] = t === 0 ? [1e3, "ms"] : pick(TIME, t);
      return scale(f, u, decimals(nums, f));
    }
    if (k === "size") {
      const [f, u] = pick(SIZE, typical(nums));
      return scale(f, u, u === "B" ? 0 : decimals(nums, f, 1));
    }
    if (k === "pct") return scale(100, "%", decimals(nums, 100, 1), true);
    if (k === "points") return scale(1, "%", decimals(nums, 1, 1));
    if (k === "int") return scale(1, "", 0);
    return scale(1, "", decimals(nums, 1, typical(nums) >= 100 ? 1 : undefined));
  }
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
    rating_label: "rating", top_error: "most common error", model_type: "model type",
    median_s: "median", p90_s: "p90", p99_s: "p99", median_ci_low: "median 95 % CI low",
    median_ci_high: "median 95 % CI high", change_vs_previous: "change", change_point_change: "change",
    background_cpu_pct: "background CPU", validity_reasons: "why", peak_memory_bytes: "peak memory",
    previous_run_id: "previous run", change_id: "change id", change_status: "change point",
    timing_method: "timing", ci_method: "interval", throughput: "items/s",
  };
  const label = (col) => WORDS[col] ?? col.replace(/_/g, " ");
  // Recorded method names in words.
  const METHODS = { order_statistics: "distribution-free (order statistics)", host_clock: "host clock",
                    cuda_events: "CUDA events", hierarchical_bootstrap: "bootstrap across processes" };
  const words = (v) => METHODS[v] ?? v;
  // Views whose answer columns come first: the rest keep their order after them.
  const FIRST = { optimal: ["model_id", "batch_size", "best_hardware", "best_backend", "best_mode", "best_value",
                            "margin", "margin_ci_low", "margin_ci_high", "margin_verdict"] };
  function order(view, columns) {
    const first = (FIRST[view] || []).filter((c) => columns.includes(c));
    return [...first, ...columns.filter((c) => !first.includes(c))];
  }
  // The unit a column of seconds is shown in: { factor, unit }.
  function unitOf(values) {
    const t = typical(values.filter(finite));
    const [factor, unit] = t === 0 ? [1e3, "ms"] : pick(TIME, t);
    return { factor, unit };
  }
  return { column, label, words, order, kind, unitOf, time: (v) => column("median_s", [v])(v) };
})();
