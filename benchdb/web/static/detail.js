// The dashboard's detail charts: a series' history, two runs compared, a result's raw samples and the
// serving frontier. Classic script sharing the page's globals (app.js: rec, labelled, COLORS, load;
// fmt.js: FMT). Every number is printed by FMT (the rules of benchdb/formatting.py); axes carry their unit.
"use strict";

const plotAxis = (label, extra = {}) => ({ label, grid: true, tickFormat: FMT.tick, ...extra });
const dayTick = (d) => FMT.date(d.toISOString());
// The warehouse's timestamps are UTC; one without an offset is read as UTC, not the browser's zone.
const utcDate = (iso) => new Date(/(Z|[+-]\d\d:?\d\d)$/.test(iso) ? iso : iso + "Z");

// The median of each run with its 95 % CI as a band, in the unit of its typical median; change points
// marked (filled: open; hollow: acknowledged) and labelled with their change and note.
function trendChart(doc) {
  const all = rec(doc);
  const unit = FMT.unitOf(all.map((r) => r.median));
  const time = FMT.timeScale(all.flatMap((r) => [r.median, r.median_ci_low, r.median_ci_high]), true);
  const pts = all.map((r) => ({ ...r, t: utcDate(r.run_started_at),
                                m: r.median * unit.factor,
                                lo: (r.median_ci_low ?? r.median) * unit.factor,
                                hi: (r.median_ci_high ?? r.median) * unit.factor }));
  if (!pts.length) return null;
  const pct = FMT.scale("pct", pts.map((p) => p.change_point_change));
  const cps = pts.filter((p) => p.change_id).map((p) => ({
    ...p, text: `${pct(p.change_point_change)} ${p.change_status === "acked" ? "acknowledged" : "open"}` +
                (p.change_note ? `: ${p.change_note}` : "") }));
  return labelled(Plot.plot({
    width: 1180, height: 320, marginLeft: 70, marginRight: 40, marginBottom: 40,
    x: { label: "run started (UTC)", type: "time", ticks: 6, tickFormat: dayTick },
    y: plotAxis(`median (${unit.unit})`),
    marks: [
      Plot.areaY(pts, { x: "t", y1: "lo", y2: "hi", fill: BLUE, fillOpacity: 0.2 }),
      Plot.lineY(pts, { x: "t", y: "m", stroke: BLUE }),
      Plot.dot(pts, { x: "t", y: "m", r: 3, fill: BLUE, className: "runs",
                      title: (p) => `${FMT.timestamp(p.run_started_at)}: median ${time(p.median)}, ` +
                                    `95 % CI ${time(p.median_ci_low)} – ${time(p.median_ci_high)}` }),
      Plot.dot(cps, { x: "t", y: "m", r: 7, stroke: ORANGE, strokeWidth: 2, className: "change-points",
                      fill: (p) => (p.change_status === "acked" ? "none" : ORANGE),
                      title: (p) => `change point: ${p.text}` }),
      Plot.text(cps, { x: "t", y: "hi", text: "text", dy: -12, fill: "currentColor", lineWidth: 30,
                       textAnchor: "middle", className: "change-labels" }),
    ],
  }), "median per run with its 95% CI band; change points marked (hollow: acknowledged)");
}

// Per scenario, the change between two runs: a dot at the change, a bar over the interval the two
// medians' CIs allow; the zero line is no change.
function forest(doc) {
  const rows = rec(doc).filter((r) => r.change !== null).map((r) => ({
    ...r, name: `${r.model_id} · ${r.backend} · batch ${r.batch_size} · ${r.input_shape}`,
    lo: r.change_low ?? r.change, hi: r.change_high ?? r.change }));
  if (!rows.length) return null;
  const pct = FMT.scale("pct", rows.flatMap((r) => [r.change, r.lo, r.hi]));
  return labelled(Plot.plot({
    width: 1180, height: 50 + 24 * rows.length, marginLeft: 380,
    x: { label: "change of the median, candidate against base (%; right: slower)", percent: true, grid: true,
         tickFormat: (v) => FMT.tick(v) },
    y: { label: null },
    marks: [
      Plot.ruleX([0], { stroke: "currentColor" }),
      Plot.link(rows, { x1: "lo", x2: "hi", y1: "name", y2: "name", stroke: BLUE, strokeWidth: 2 }),
      Plot.dot(rows, { x: "change", y: "name", fill: ORANGE, r: 4, className: "changes",
                       title: (r) => `${r.name}: ${pct(r.change)} (${pct(r.lo)} to ${pct(r.hi)})` }),
    ],
  }), "change per scenario, candidate against base, with the interval its medians allow");
}

// The compare page: the forest and the per-scenario histograms, or, when no scenario was measured
// validly in both runs, why (from the environment view's result counts).
async function comparePage(doc, filters) {
  const out = [];
  const f = forest(doc);
  if (f) out.push(f);
  if (!doc.rows.length) {
    const env = rec(await load("environment", filters, CATALOG));
    const item = (name) => env.find((r) => r.item === name) || {};
    const results = item("results"), count = (name) => Number(item(name).base ?? 0);
    const common = count("scenarios in common"), valid = count("valid in both");
    const sides = `the base has ${results.base ?? "0 results"}; the candidate has ${results.cand ?? "0 results"}`;
    const p = document.createElement("p");
    p.className = "why-empty";
    p.setAttribute("role", "note");
    p.textContent = common === 0
      ? `No scenario in common (model, backend, batch, input, hardware): ${sides}.`
      : valid === 0
        ? `No scenario measured validly in both runs (${common} in common): ${sides}.`
        : `The ${valid} scenario(s) valid in both runs have no timing metric in seconds to compare ` +
          "(a published throughput, for one): the systems page and the optimal-hardware page compare those.";
    out.push(p);
    return out;
  }
  const h = compareHistograms(await load("compare_samples", filters, CATALOG));
  if (h) out.push(h);
  return out;
}

// A metric's stored unit as an axis: seconds and bytes in the unit of their typical value.
function axisUnit(values, stored) {
  if (stored === "s") return FMT.unitOf(values);
  if (stored === "bytes") {
    const text = FMT.size(values.slice().sort((a, b) => a - b)[Math.floor(values.length / 2)]);
    const unit = text.split(" ").pop();
    return { factor: { GiB: 2 ** -30, MiB: 2 ** -20, KiB: 2 ** -10, B: 1 }[unit], unit };
  }
  return { factor: 1, unit: stored };
}

// Per metric of a result's raw samples, the timing metric first: a histogram over the 0.5-99.5 % range
// (an outlier is counted under it, not drawn) beside the ECDF on the same axis; a metric with few
// samples as dots, one with a single sample as a number.
function sampleCharts(doc) {
  const by = new Map();
  for (const r of rec(doc)) {
    if (!by.has(r.metric)) by.set(r.metric, { unit: r.unit, values: [] });
    by.get(r.metric).values.push(r.value);
  }
  const order = doc.statistics ? rec(doc.statistics).map((s) => s.metric) : [];
  const rank = (m) => (order.includes(m) ? order.indexOf(m) : order.length);
  const metrics = [...by.keys()].sort((a, b) => (by.get(a).values.length === 1) - (by.get(b).values.length === 1) ||
                                                rank(a) - rank(b) || a.localeCompare(b));
  const box = document.createElement("div");
  box.className = "sample-charts";
  box.style.cssText = "display: flex; flex-wrap: wrap; gap: 0.5em 2em; align-items: flex-start";
  metrics.forEach((metric, i) => box.append(metricFigure(metric, by.get(metric), i === 0)));
  return box;
}

function metricFigure(metric, { unit: stored, values: raw }, first) {
  const fig = document.createElement("figure");
  fig.className = "metric";
  fig.dataset.metric = metric;
  const head = document.createElement("h3");
  head.style.cssText = "font-size: 1em; margin: 0.3em 0";
  const cap = document.createElement("figcaption");
  const show = (v) => FMT.quantity(v, stored === "s" || stored === "bytes" ? stored : "");
  const n = raw.length;
  const med = d3.median(raw);
  if (n === 1) {
    head.textContent = metric;
    cap.textContent = `${show(raw[0])} (one sample)`;
    fig.append(head, cap);
    return fig;
  }
  const u = axisUnit(raw, stored);
  const name = `${metric.replace(/_(s|bytes)$/, "").replace(/_/g, " ")} (${u.unit})`;
  head.textContent = `${metric} (${u.unit})`;
  const [lo, hi, outside] = FMT.clipRange(raw);
  const domain = lo === hi ? [lo * u.factor * 0.99, hi * u.factor * 1.01] : [lo * u.factor, hi * u.factor];
  const shown = raw.filter((v) => v >= lo && v <= hi).map((v) => v * u.factor);
  const width = first ? 580 : 400;
  const x = plotAxis(name, { domain, grid: false });
  const charts = [];
  if (n < 10) {
    charts.push(labelled(Plot.plot({
      width, height: 90, marginLeft: 20, x: { ...x, domain: undefined, zero: false }, y: { axis: null },
      marks: [Plot.dot(raw.map((v) => v * u.factor), { x: (v) => v, r: 4, fill: BLUE }),
              Plot.ruleX([med * u.factor], { stroke: ORANGE, strokeWidth: 2 })],
    }), `samples of ${name}`));
    cap.textContent = `n = ${n}, median ${show(med)}`;
  } else {
    charts.push(labelled(Plot.plot({
      width, height: first ? 240 : 180, marginLeft: 50, x, y: plotAxis("samples"),
      marks: [Plot.rectY(shown, Plot.binX({ y: "count" }, { x: (v) => v, fill: BLUE, thresholds: 40, domain })),
              Plot.ruleX([med * u.factor], { stroke: ORANGE, strokeWidth: 2 }), Plot.ruleY([0])],
    }), `histogram of ${name}`));
    if (first) {
      const sorted = Float64Array.from(raw).sort();
      const ecdf = Array.from(sorted, (v, i) => ({ v: v * u.factor, p: (i + 1) / n }));
      charts.push(labelled(Plot.plot({
        width, height: 240, marginLeft: 50, x: { ...x, clamp: false }, clip: true,
        y: plotAxis("share of samples at or below", { domain: [0, 1] }),
        marks: [Plot.line(ecdf, { x: "v", y: "p", curve: "step-after", stroke: BLUE }),
                Plot.ruleX([med * u.factor], { stroke: ORANGE, strokeWidth: 2 })],
      }), `empirical cumulative distribution of ${name}`));
    }
    cap.textContent = `n = ${n}, median ${show(med)} (orange line); ${FMT.clipNote(outside, n)}` +
      (outside ? ` (from ${show(raw.reduce((a, b) => Math.min(a, b)))} to ${show(raw.reduce((a, b) => Math.max(a, b)))})` : "");
  }
  const row = document.createElement("div");
  row.style.cssText = "display: flex; gap: 1.5em; flex-wrap: wrap";
  row.append(...charts);
  fig.append(head, row, cap);
  if (first) fig.style.flexBasis = "100%";
  return fig;
}

// The statistics of each of a result's metrics, as recorded at ingest: each row in its metric's unit
// (seconds as µs/ms/s, bytes as KiB/MiB/GiB), the timing metric first; counts as integers.
const STAT_COLUMNS = [["n", "n"], ["median", "median"], ["median_ci_low", "95 % CI low"],
                      ["median_ci_high", "95 % CI high"], ["mean", "mean"], ["stddev", "stddev"], ["min", "min"],
                      ["p90", "p90"], ["p99", "p99"], ["max", "max"]];
function statisticsTable(stats) {
  const t = document.createElement("table");
  t.setAttribute("aria-label", "statistics of each metric");
  const head = t.createTHead().insertRow();
  for (const h of ["metric", ...STAT_COLUMNS.map(([, h]) => h)]) {
    head.append(Object.assign(document.createElement("th"), { textContent: h, scope: "col" }));
  }
  const body = t.createTBody();
  for (const r of rec(stats)) {
    if (!r.metric) continue;
    const tr = body.insertRow();
    const own = r.unit === "s" || r.unit === "bytes";
    tr.append(Object.assign(document.createElement("th"), { scope: "row",
      textContent: own || !r.unit ? r.metric : `${r.metric} (${r.unit})` }));
    const row = STAT_COLUMNS.slice(1).map(([c]) => r[c]).filter((v) => v !== null && v !== undefined);
    for (const [c] of STAT_COLUMNS) {
      const td = tr.insertCell();
      td.className = "num";
      td.textContent = c === "n" ? FMT.scale("int", [r.n])(r.n) : FMT.quantity(r[c], own ? r.unit : "", row);
    }
  }
  return t;
}

// The static site stores each sample in 16 bits (packed.py): how far a shown value may lie from the
// measured one, per metric (relative for a log scale, in the metric's unit for a linear one); the server
// sends them exact.
function quantisedNote(quantised) {
  const parts = Object.entries(quantised).map(([metric, q]) => {
    const own = q.unit === "s" || q.unit === "bytes" ? q.unit : "";
    const within = [q.relative ? FMT.quantity(q.relative * 100, "%") : null,
                    q.absolute ? (own ? FMT.quantity(q.absolute, own) : FMT.quantity(q.absolute, q.unit || "")) : null]
      .filter(Boolean).map((w) => `±${w}`).join(" or ");
    return `${metric} ${within || "exact"}` +
      (q.t_offset_s ? ` (time offsets ±${FMT.quantity(q.t_offset_s, "s")})` : "");
  });
  const p = document.createElement("p");
  p.className = "quantised";
  p.setAttribute("role", "note");
  p.textContent = "This static site stores each sample in 16 bits; a value shown here lies within " +
    parts.join("; ") + " of the measured one. benchdb dashboard shows them exact.";
  return p;
}

// Two runs, scenario by scenario: each side's samples as a histogram, on one axis relative to the
// base median (0 %), so a shift and a change of spread both show. The scenarios that changed most.
function compareHistograms(doc) {
  const rows = rec(doc).map((r) => ({ ...r, name: `${r.model_id} · ${r.backend} · batch ${r.batch_size} · ${r.input_shape}` }));
  if (!rows.length) return null;
  const names = [...new Set(rows.map((r) => r.name))];
  const fig = document.createElement("figure");
  const cap = document.createElement("figcaption");
  cap.textContent = `Samples of the ${names.length} scenario(s) whose median changed most: before (base) and after (candidate)`;
  fig.append(cap, labelled(Plot.plot({
    width: 1180, height: 30 + 110 * names.length, marginLeft: 50, marginRight: 380,
    x: { label: "sample against the base median (%)", percent: true, grid: true, tickFormat: FMT.tick },
    y: plotAxis("samples"),
    fy: { label: null, domain: names },
    color: { domain: ["base", "candidate"], range: [BLUE, ORANGE], legend: true },
    marks: [Plot.rectY(rows, Plot.binX({ y2: "count" }, { x: "relative", fy: "name", fill: "side", fillOpacity: 0.55,
                                                          thresholds: 40 })),
            Plot.ruleX([0], { stroke: "currentColor" }), Plot.ruleY([0])],
  }), "histograms of each scenario's samples, base and candidate"));
  fig.className = "compare-histograms";
  return fig;
}

// A serving configuration's label, told apart from every other one on the page: model, system,
// engine, precision and who measured it; the engine options' id only where two would read the same.
// The workload a load point ran (its endpoint and input shape without the load): points of two
// workloads are two lines, never one.
const workloadOf = (r) => `${r.endpoint ?? ""} ${(r.input_shape ?? "").replace(/(^|,)(concurrency|rate)=[^,]*/, "")}`.trim();
function configLabels(rows) {
  const base = (r) => `${r.model_id} · ${r.hardware_name} · ${r.engine} ${r.precision} · ${r.measured_by}` +
                      (r.published ? " (published)" : "");
  const seen = new Map();   // base -> the workloads and options under it
  for (const r of rows) {
    const b = base(r);
    if (!seen.has(b)) seen.set(b, { workloads: new Set(), options: new Set() });
    seen.get(b).workloads.add(workloadOf(r));
    seen.get(b).options.add(r.options_id);
  }
  const short = FMT.shortIds(rows.map((r) => r.options_id), 6);   // two options' ids never read the same
  return rows.map((r) => {
    const s = seen.get(base(r));
    return { ...r, config: base(r) + (s.workloads.size > 1 ? ` · ${workloadOf(r)}` : "") +
                           (s.options.size > 1 ? ` · options ${short(r.options_id)}` : "") };
  });
}

function chartGroup(label) {
  const box = document.createElement("div");
  box.setAttribute("role", "group");
  box.setAttribute("aria-label", label);
  return box;
}

// Serving: per model, each configuration's output-token throughput per accelerator against
// interactivity (tokens/s per user): colour tells the system, the symbol the engine and precision, a
// line joins one configuration's points in order of load (its curve); measured points on their
// configuration's Pareto front filled with the 95 % CI of their interactivity as a bar, those it beats
// small and hollow; published ones hollow on a dashed line (no interval: summary figures only).
function frontierChart(doc) {
  const rows = configLabels(rec(doc).filter((r) => r.interactivity !== null && r.output_throughput_per_device !== null))
    .map((r) => ({ ...r, engine_precision: `${r.engine} ${r.precision}` }));
  if (!rows.length) return null;
  const box = chartGroup("serving frontier: throughput per accelerator against interactivity, per model");
  const rate = FMT.scale("num", rows.map((r) => r.output_throughput_per_device));
  const inter = FMT.scale("num", rows.map((r) => r.interactivity));
  for (const model of [...new Set(rows.map((r) => r.model_id))]) {
    const pts = rows.filter((r) => r.model_id === model);
    const measured = pts.filter((r) => !r.published), published = pts.filter((r) => r.published);
    const front = measured.filter((r) => r.on_front), beaten = measured.filter((r) => !r.on_front);
    const systems = [...new Set(pts.map((r) => r.hardware_name))].sort();
    const engines = [...new Set(pts.map((r) => r.engine_precision))].sort();
    const fig = document.createElement("figure");
    const title = (r) => `${r.config}\n${r.load_kind ?? "load"} ${r.load_value ?? "?"}` +
      (r.curve_region ? ` (curve: ${r.curve_region})` : "") + ": " +
      `${rate(r.output_throughput_per_device)} tokens/s per accelerator, ${inter(r.interactivity)} tokens/s per user` +
      (r.published ? " (published, no interval)" : r.on_front ? "" : " (beaten by its own curve)") +
      (r.figures_window === "steady state" ? "; over its steady-state window" : "");
    const xy = { x: "interactivity", y: "output_throughput_per_device" };
    const chart = Plot.plot({
      width: 1180, height: 360, marginLeft: 70, marginRight: 30, marginTop: 30,
      color: { domain: systems, range: COLORS, legend: true, label: "system" },
      symbol: { domain: engines, legend: true, label: "engine and precision" },
      x: plotAxis("interactivity (tokens/s per user)", { zero: true, nice: true }),
      y: plotAxis("output throughput (tokens/s per accelerator)", { zero: true, nice: true }),
      marks: [
        Plot.line(measured, { ...xy, stroke: "hardware_name", z: "config", sort: "load_value" }),
        Plot.link(front.filter((r) => r.interactivity_ci_low !== null), {
          x1: "interactivity_ci_low", x2: "interactivity_ci_high", y1: "output_throughput_per_device",
          y2: "output_throughput_per_device", stroke: "hardware_name", strokeWidth: 2, className: "intervals" }),
        Plot.dot(front, { ...xy, fill: "hardware_name", symbol: "engine_precision", r: 5, className: "measured", title }),
        Plot.dot(beaten, { ...xy, stroke: "hardware_name", symbol: "engine_precision", r: 3, fill: "white",
                           className: "beaten", title }),
        Plot.line(published, { ...xy, stroke: "hardware_name", z: "config", sort: "interactivity",
                               strokeDasharray: "4 3", strokeOpacity: 0.8 }),
        Plot.dot(published, { ...xy, stroke: "hardware_name", symbol: "engine_precision", r: 5, strokeWidth: 1.5,
                              fill: "none", className: "published", title }),
      ],
    });
    const cap = document.createElement("figcaption");
    const listed = [...new Set(measured.map((r) => r.config))];
    const said = [];
    if (listed.length) {
      said.push("solid line: each measured configuration's load points in order of load; filled: on its Pareto " +
                `front (bar: the 95 % CI of its interactivity)${beaten.length ? ", small and hollow: beaten by a point of its own" : ""}: ` +
                listed.join("; "));
    }
    const curves = [...new Set(measured.filter((r) => r.curve_region).map((r) => r.config))];
    if (curves.length) said.push(`${curves.length} measured with --curve (hover a point for its region)`);
    if (published.length) {
      said.push(`hollow, dashed line: published by its source, ${new Set(published.map((r) => r.config)).size} ` +
                "configuration(s) (summary figures only, so no interval; hover a point for its own)");
    }
    cap.textContent = `${model}: ${said.join("; ")}`;
    fig.append(labelled(chart, `throughput per accelerator against interactivity: ${model}`), cap);
    box.append(fig);
  }
  return box;
}

// Serving load points: per model, TTFT (p90, the SLO's percentile; p50 dashed) and TPOT p50 (its 95 %
// CI as a band) against load, a line per configuration; the SLO given in the URL (ttft_ms, tpot_ms)
// as a horizontal line.
function servingCharts(doc, filters) {
  const rows = configLabels(rec(doc).filter((r) => r.load_value !== null));
  if (!rows.length) return null;
  const box = chartGroup("time to first token and time per output token against load");
  const slo = { ttft: filters.ttft_ms ? Number(filters.ttft_ms) / 1000 : null,
                tpot: filters.tpot_ms ? Number(filters.tpot_ms) / 1000 : null };
  for (const model of [...new Set(rows.map((r) => r.model_id))]) {
    const pts = rows.filter((r) => r.model_id === model);
    const configs = [...new Set(pts.map((r) => r.config))];
    const kinds = [...new Set(pts.map((r) => r.load_kind))];
    const xLabel = kinds.length === 1 && kinds[0] === "rate" ? "load (requests/s)" : `load (${kinds.join(" / ")})`;
    const fig = document.createElement("figure");
    const row = document.createElement("div");
    row.style.cssText = "display: flex; gap: 1.5em; flex-wrap: wrap";
    const panel = (metric, name, p50, line, lo, hi) => {
      const u = FMT.unitOf(pts.map((r) => r[metric]));  // the data's unit; an SLO far off it still reads
      const v = (c) => (r) => (r[c] === null ? NaN : r[c] * u.factor);
      const marks = [];
      if (lo) marks.push(Plot.areaY(pts, { x: "load_value", y1: v(lo), y2: v(hi), fill: "config", z: "config",
                                           fillOpacity: 0.15, sort: "load_value" }));
      if (p50) marks.push(Plot.line(pts, { x: "load_value", y: v(p50), stroke: "config", z: "config",
                                           strokeDasharray: "3 3", sort: "load_value" }));
      marks.push(Plot.line(pts, { x: "load_value", y: v(metric), stroke: "config", z: "config", sort: "load_value" }),
                 Plot.dot(pts, { x: "load_value", y: v(metric), fill: "config", r: 3.5,
                                 title: (r) => `${r.config}\n${r.load_kind} ${r.load_value}` +
                                               (r.curve_region ? ` (curve: ${r.curve_region})` : "") +
                                               `: ${name} ${FMT.quantity(r[metric], "s")} over the ` +
                                               (r.figures_window ?? "whole window") }));
      if (line !== null) {
        marks.push(Plot.ruleY([line * u.factor], { stroke: ORANGE, strokeDasharray: "6 4", className: "slo" }),
                   Plot.text([line * u.factor], { y: (d) => d, frameAnchor: "right", dy: -7, fill: ORANGE,
                                                  text: () => `SLO ${FMT.time(line)}` }));
      }
      return labelled(Plot.plot({
        width: 570, height: 260, marginLeft: 60,
        color: { domain: configs, range: COLORS },
        x: plotAxis(xLabel), y: plotAxis(`${name} (${u.unit})`, { zero: true }), marks,
      }), `${name} against load: ${model}`);
    };
    row.append(panel("ttft_p90_s", "TTFT p90", "ttft_p50_s", slo.ttft),
               panel("tpot_p50_s", "TPOT p50", null, slo.tpot, "tpot_p50_ci_low_s", "tpot_p50_ci_high_s"));
    const legend = Plot.legend({ color: { domain: configs, range: COLORS }, swatchWidth: 20 });
    const cap = document.createElement("figcaption");
    cap.textContent = `${model}: TTFT p90 solid, p50 dashed; TPOT p50 with its 95 % CI as a band` +
      (slo.ttft || slo.tpot ? "; the SLO as an orange dashed line" : "; add ttft_ms= / tpot_ms= to the URL to draw an SLO");
    fig.append(legend, row, cap);
    box.append(fig);
  }
  return box;
}
