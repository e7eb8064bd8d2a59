// The dashboard's detail charts: a series' history, two runs compared, a result's raw samples and the
// serving frontier. Classic script sharing the page's globals (app.js: rec, labelled, COLORS; fmt.js: FMT).
"use strict";

// The median of each run with its 95 % CI as a band, in the unit of its typical median; change points marked (hollow: acknowledged).
function trendChart(doc) {
  const all = rec(doc);
  const unit = FMT.unitOf(all.map((r) => r.median));
  const pts = all.map((r) => ({ ...r, t: new Date(r.run_started_at), m: r.median * unit.factor,
                                lo: (r.median_ci_low ?? r.median) * unit.factor,
                                hi: (r.median_ci_high ?? r.median) * unit.factor }));
  if (!pts.length) return null;
  const cps = pts.filter((p) => p.change_id);
  return labelled(Plot.plot({
    width: 760, height: 280, marginLeft: 60,
    x: { label: "run started (UTC)", type: "time" },
    y: { label: `median (${unit.unit})`, grid: true },
    marks: [
      Plot.areaY(pts, { x: "t", y1: "lo", y2: "hi", fill: BLUE, fillOpacity: 0.2 }),
      Plot.lineY(pts, { x: "t", y: "m", stroke: BLUE }),
      Plot.dot(pts, { x: "t", y: "m", r: 2.5, fill: BLUE,
                      title: (p) => `${p.run_started_at}: ${NUMBER.format(p.m)} ${unit.unit} [${NUMBER.format(p.lo)}, ${NUMBER.format(p.hi)}]` }),
      Plot.dot(cps, { x: "t", y: "m", r: 6, stroke: ORANGE, strokeWidth: 2,
                      fill: (p) => (p.change_status === "acked" ? "none" : ORANGE), className: "change-points",
                      title: (p) => `change point (${p.change_status}): ${NUMBER.format(p.change_point_change * 100)} %` }),
    ],
  }), "median per run with its 95% CI; change points marked");
}

// Per scenario, the change between two runs: a dot at the change, a bar over the interval the two
// medians' CIs allow; the zero line is no change.
function forest(doc) {
  const rows = rec(doc).filter((r) => r.change !== null).map((r) => ({
    ...r, name: `${r.model_id} · ${r.backend} · bs=${r.batch_size} · ${r.input_shape}`,
    lo: r.change_low ?? r.change, hi: r.change_high ?? r.change }));
  if (!rows.length) return null;
  return labelled(Plot.plot({
    width: 760, height: 40 + 22 * rows.length, marginLeft: 280,
    x: { label: "change of the median, candidate against base (%; right: slower)", percent: true, grid: true },
    y: { label: null },
    marks: [
      Plot.ruleX([0], { stroke: "currentColor" }),
      Plot.link(rows, { x1: "lo", x2: "hi", y1: "name", y2: "name", stroke: BLUE, strokeWidth: 2 }),
      Plot.dot(rows, { x: "change", y: "name", fill: ORANGE, r: 4, className: "changes",
                       title: (r) => `${r.name}: ${NUMBER.format(r.change * 100)} %` }),
    ],
  }), "change per scenario, candidate against base, with the interval its medians allow");
}

// Per metric of a result's raw samples: a histogram (the median a rule) and the ECDF, side by side.
function sampleCharts(doc) {
  const by = new Map();
  for (const r of rec(doc)) {
    const k = `${r.metric}\u0000${r.unit}`;
    if (!by.has(k)) by.set(k, []);
    by.get(k).push(r.value);
  }
  const box = document.createElement("div");
  for (const [key, raw] of by) {
    // seconds in the unit of their typical value, as in the tables (µs, ms, s)
    const [metric, stored] = key.split("\u0000");
    const u = stored === "s" ? FMT.unitOf(raw) : { factor: 1, unit: stored };
    const name = `${metric} (${u.unit})`;
    const values = raw.map((v) => v * u.factor);
    const med = d3.median(values);
    const sorted = Float64Array.from(values).sort();
    const ecdf = Array.from(sorted, (v, i) => ({ v, p: (i + 1) / sorted.length }));
    // the histogram shows the 0.5-99.5 % range (one outlier would put every sample in one bar); the ECDF all
    const last = sorted.length - 1;
    const lo = sorted[Math.floor(last * 0.005)], hi = sorted[Math.floor(last * 0.995)];
    const shown = values.filter((v) => v >= lo && v <= hi);
    const fig = document.createElement("figure");
    const cap = document.createElement("figcaption");
    cap.textContent = `${name}: n = ${values.length}, median ${NUMBER.format(med)} ${u.unit}; histogram: ` +
      `0.5-99.5 % of samples shown` + (shown.length < values.length ? `, ${values.length - shown.length} outside` : "");
    fig.append(cap, labelled(Plot.plot({
      width: 420, height: 200, marginLeft: 50,
      x: { label: name }, y: { label: "samples", grid: true },
      marks: [Plot.rectY(shown, Plot.binX({ y: "count" }, { x: (v) => v, fill: BLUE })),
              Plot.ruleX([med], { stroke: ORANGE, strokeWidth: 2 }), Plot.ruleY([0])],
    }), `histogram of ${name}`), labelled(Plot.plot({
      width: 420, height: 200, marginLeft: 50,
      x: { label: name }, y: { label: "share of samples at or below", grid: true, domain: [0, 1] },
      marks: [Plot.line(ecdf, { x: "v", y: "p", curve: "step-after", stroke: BLUE }),
              Plot.ruleX([med], { stroke: ORANGE, strokeWidth: 2 })],
    }), `empirical cumulative distribution of ${name}`));
    box.append(fig);
  }
  return box;
}

// The statistics of each of a result's metrics, as recorded at ingest.
function statisticsTable(stats) {
  const t = table({ columns: stats.columns.filter((c) => !SCENARIO.has(c)),
                    rows: stats.rows.map((r) => r.filter((_, i) => !SCENARIO.has(stats.columns[i]))) }, "statistics", true);
  t.setAttribute("aria-label", "statistics of each metric");
  return t;
}
const SCENARIO = new Set(["result_id", "model_id", "backend", "device", "mode", "precision", "batch_size",
                          "input_shape", "series_id", "threads", "repeats", "status", "validity"]);

// Two runs, scenario by scenario: each side's samples as a histogram, on one axis relative to the
// base median (0 %), so a shift and a change of spread both show. The scenarios that changed most.
function compareHistograms(doc) {
  const rows = rec(doc).map((r) => ({ ...r, name: `${r.model_id} · ${r.backend} · bs=${r.batch_size} · ${r.input_shape}` }));
  if (!rows.length) return null;
  const names = [...new Set(rows.map((r) => r.name))];
  const fig = document.createElement("figure");
  const cap = document.createElement("figcaption");
  cap.textContent = `Samples of the ${names.length} scenario(s) whose median changed most: base and candidate`;
  fig.append(cap, labelled(Plot.plot({
    width: 760, height: 30 + 110 * names.length, marginLeft: 50, marginRight: 300,
    x: { label: "sample against the base median (%)", percent: true, grid: true },
    y: { label: "samples", grid: true },
    fy: { label: null, domain: names },
    color: { domain: ["base", "candidate"], range: [BLUE, ORANGE], legend: true },
    marks: [Plot.rectY(rows, Plot.binX({ y2: "count" }, { x: "relative", fy: "name", fill: "side", fillOpacity: 0.55,
                                                          thresholds: 40 })),
            Plot.ruleX([0], { stroke: "currentColor" }), Plot.ruleY([0])],
  }), "histograms of each scenario's samples, base and candidate"));
  fig.className = "compare-histograms";
  return fig;
}

// Serving: output-token throughput per device against interactivity, a line per configuration
// (model, hardware, engine, precision, engine options: a different option is another line).
function frontierChart(doc) {
  const rows = rec(doc).filter((r) => r.interactivity !== null && r.output_throughput_per_device !== null)
    .map((r) => ({ ...r, config: `${r.model_id} · ${r.hardware_name} · ${r.engine} ${r.precision} · ` +
                                 `options ${String(r.options_id).slice(0, 6)} · ${r.measured_by}` }));
  if (!rows.length) return null;
  return labelled(Plot.plot({
    width: 760, height: 300, marginLeft: 60,
    color: { range: COLORS, legend: true },
    x: { label: "interactivity (tokens/s per user)", grid: true, zero: true },
    y: { label: "output throughput (tokens/s per device)", grid: true, zero: true },
    marks: [Plot.line(rows, { x: "interactivity", y: "output_throughput_per_device", stroke: "config", z: "config",
                              sort: "interactivity" }),
            Plot.dot(rows, { x: "interactivity", y: "output_throughput_per_device", fill: "config", r: 4,
                             title: (r) => `${r.config}\n${r.load_kind} ${r.load_value}: ` +
                               `${NUMBER.format(r.output_throughput_per_device)} tokens/s per device, ` +
                               `${NUMBER.format(r.interactivity)} tokens/s per user` })],
  }), "serving frontier: throughput per device against interactivity");
}
