// The benchdb dashboard page: one script, no build step. The URL holds the view and every filter
// (?view=results&model=...), so a link or a reload reproduces what is on screen. Data comes from
// the server's /api (benchdb serve) or from data/*.json (benchdb site: filtered here).
"use strict";

const MODE = document.querySelector('meta[name="benchdb-mode"]').content;
const $ = (id) => document.getElementById(id);
const NUMBER = new Intl.NumberFormat("en", { maximumSignificantDigits: 4 });

function state() {
  const q = new URLSearchParams(location.search);
  const view = q.get("view") || "runs";
  q.delete("view");
  return { view, filters: Object.fromEntries([...q].filter(([, v]) => v !== "")) };
}

function href(view, filters) {
  const q = new URLSearchParams({ view, ...filters });
  return "?" + q.toString();
}

async function getJSON(url) {
  const resp = await fetch(url, { cache: "no-store" });
  const doc = await resp.json().catch(() => ({ error: `${resp.status} ${resp.statusText}` }));
  if (!resp.ok) throw new Error(doc.error || `${resp.status} ${resp.statusText}`);
  return doc;
}

// The systems page's normalisation (per=...) and prices (price:<accelerator>=USD per hour) are the
// page's own: the data is the same for every choice.
const CLIENT_ONLY = (name) => name === "per" || name.startsWith("price:");

async function load(view, filters, catalog) {
  if (MODE === "server") {
    const sent = Object.entries(filters).filter(([f]) => !(view === "systems" && CLIENT_ONLY(f)));
    return getJSON(`api/${encodeURIComponent(view)}?` + new URLSearchParams(sent));
  }
  const spec = catalog.views.find((v) => v.name === view);
  if (view === "slo") throw new Error("an SLO is computed by the server: run `benchdb serve` for this view");
  if (view === "trends") return getJSON(`data/trends/${encodeURIComponent(filters.series)}.json`);
  if (view === "samples") return getJSON(`data/samples/${encodeURIComponent(filters.result)}.json`);
  if (view === "compare" || view === "compare_samples" || view === "environment") {
    return getJSON(`data/${view}/${encodeURIComponent(filters.base)}__${encodeURIComponent(filters.cand)}.json`);
  }
  if (view === "optimal" && filters.max_latency_ms) {
    throw new Error("a latency limit is computed by the server: run `benchdb serve` for max_latency_ms");
  }
  const file = view === "optimal" ? `optimal__${filters.objective || "throughput"}` : view;
  const doc = await getJSON(`data/${encodeURIComponent(file)}.json`);
  const keep = Object.entries(filters).filter(([f]) => spec.columns[f])
    .map(([f, v]) => [doc.columns.indexOf(spec.columns[f]), v]);
  doc.rows = doc.rows.filter((row) => keep.every(([i, v]) => i < 0 || String(row[i]) === v));
  doc.filters = filters;
  return doc;
}

// One cell; ``show`` formats a number in its column's unit (FMT.column), ``drill`` links the row's
// first cell to its result's raw samples.
function cell(col, value, rec, show, drill) {
  const td = document.createElement("td");
  if (value === null || value === undefined) return td;
  if (col === "rating_label" || col === "rating") td.classList.add(`rating-${value}`);
  if (drill) {
    const a = document.createElement("a");
    a.href = href("samples", { result: drill });
    a.textContent = typeof value === "number" && show ? show(value) : String(value);
    a.title = "raw samples of this result";
    td.append(a);
    return td;
  }
  if (col === "previous_run_id") {
    const a = document.createElement("a");
    a.href = href("compare", { base: value, cand: rec.run_id });
    a.textContent = "compare with " + String(value).slice(0, 8);
    a.title = "compare this run with the one before it";
    td.append(a);
  } else if (col === "series_id") {
    const a = document.createElement("a");
    a.href = href("trends", { series: value });
    a.textContent = String(value).slice(0, 12);
    a.title = "history of this series";
    td.append(a);
  } else if (col === "result_id" || col === "base_result_id" || col === "cand_result_id") {
    const a = document.createElement("a");
    a.href = href("samples", { result: value });
    a.textContent = String(value).slice(0, 12);
    a.title = "raw samples of this result";
    td.append(a);
  } else if (typeof value === "number") {
    td.classList.add("num");
    td.textContent = show ? show(value) : NUMBER.format(value);
  } else {
    td.textContent = FMT.words(String(value));
    if (td.textContent.length > 40) td.classList.add("wrap");
  }
  return td;
}

// A table of more rows than this is cut on screen (the charts and the JSON have them all).
const SHOWN = 2000;

// Headings in words (the SQL name in the tooltip), the view's answer columns first, each numeric
// column in one unit; rows of metrics with different units (``mixed``) keep plain numbers.
function table(doc, view, mixed) {
  const t = document.createElement("table");
  const cols = FMT.order(view, doc.columns);
  const at = cols.map((c) => doc.columns.indexOf(c));
  const rows = doc.rows.slice(0, SHOWN);
  const show = mixed ? {} : Object.fromEntries(cols.map((c, j) => [c, FMT.column(c, rows.map((r) => r[at[j]]))]));
  const head = t.createTHead().insertRow();
  for (const c of cols) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = FMT.label(c);
    th.title = c;
    head.append(th);
  }
  const body = t.createTBody();
  for (const row of rows) {
    const tr = body.insertRow();
    const rec = Object.fromEntries(doc.columns.map((c, i) => [c, row[i]]));
    const drill = view === "samples" || mixed ? null : rec.best_result_id ?? rec.result_id ?? null;
    // a winner with no runner-up has no margin verdict: it is the only one measured
    const value = (c, v) => (c === "margin_verdict" && v === null && rec.best_hardware ? "only one" : v);
    cols.forEach((c, j) => tr.append(cell(c, value(c, row[at[j]]), rec, show[c],
                                          j === 0 && drill !== null && !/(result|run|series)_id$/.test(c) ? drill : null)));
  }
  return t;
}

// Charts: Observable Plot (vendored, pinned: static/vendor/), SVG with labels and units on every axis,
// colours from the Okabe-Ito palette (told apart with colour-blindness), following light or dark.
const COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000"];
const BLUE = COLORS[0], ORANGE = COLORS[5];
const rec = (doc) => doc.rows.map((r) => Object.fromEntries(doc.columns.map((c, i) => [c, r[i]])));

function labelled(chart, label) {
  chart.setAttribute("role", "img");
  chart.setAttribute("aria-label", label);
  return chart;
}

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

// Systems side by side for one model: a bar per system of its headline figure per system, per
// accelerator, per watt or per dollar-hour (?per=; prices per accelerator-hour as ?price:<name>=USD),
// best first. Measured bars are solid with their 95 % interval; published (summary-only) bars are
// hatched and outlined, with no interval: they have no samples. For serving, each system's frontier of
// throughput per accelerator against interactivity, published ones dashed.
const PER = { system: "per system", accelerator: "per accelerator", watt: "per watt", cost: "per dollar-hour" };
const PER_UNIT = { system: "", accelerator: " per accelerator", watt: " per W", cost: " per USD/h" };

function hatchDefs() {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", "0");
  svg.setAttribute("height", "0");
  svg.setAttribute("aria-hidden", "true");
  svg.style.position = "absolute";
  svg.innerHTML = `<defs><pattern id="bdb-hatch" patternUnits="userSpaceOnUse" width="6" height="6"
    patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" stroke="${BLUE}" stroke-width="2.5"/>
    </pattern></defs>`;
  return svg;
}

function legend() {
  const p = document.createElement("p");
  p.className = "legend";
  p.innerHTML = '<span class="swatch measured"></span> measured by benchdb (line: 95 % interval) ' +
    '<span class="swatch published"></span> published, summary-only (no samples: no interval)';
  return p;
}

function systemsControls(spec, filters, rows) {
  const per = document.createElement("select");
  per.name = "per";
  for (const [k, text] of Object.entries(PER)) {
    const o = document.createElement("option");
    o.value = k;
    o.textContent = text;
    per.append(o);
  }
  per.value = PER[filters.per] ? filters.per : "system";
  const label = document.createElement("label");
  label.textContent = "per";
  formField(spec, label, per);
  if (per.value !== "cost") return;
  for (const acc of [...new Set(rows.map((r) => r.accelerator).filter((a) => a))].sort()) {
    const l = document.createElement("label");
    l.textContent = `USD per hour of one ${acc}`;
    const input = document.createElement("input");
    input.name = `price:${acc}`;
    input.type = "number";
    input.step = "any";
    input.min = "0";
    input.value = filters[`price:${acc}`] || "";
    formField(spec, l, input);
  }
}

function normalised(r, per, filters) {
  if (!r.higher_is_better) return per === "watt" || per === "cost" ? null : r.value;   // a latency: not divided
  if (per === "accelerator") return r.value_per_accelerator;
  if (per === "watt") return r.value_per_watt;
  if (per === "cost") {
    const usd = Number(filters[`price:${r.accelerator}`]);
    return usd > 0 && r.devices ? r.value / (usd * r.devices) : null;
  }
  return r.value;
}

function missingWhy(r, per) {
  if (!r.higher_is_better) return "a latency";
  if (per === "watt") return "no power measured";
  if (per === "cost") return "no price";
  return "accelerators unknown";
}

function systemBars(rows, per, filters) {
  const scenarios = new Set(rows.map((r) => r.scenario));
  const bars = [], left = [];
  for (const r of rows) {
    const shown = normalised(r, per, filters);
    const label = r.system_name + (scenarios.size > 1 ? ` · ${r.scenario}` : "");
    if (shown === null || shown === undefined) {
      left.push(`${label}: ${missingWhy(r, per)}`);
      continue;
    }
    const scale = r.value ? shown / r.value : null;
    const unit = r.unit + (r.higher_is_better ? PER_UNIT[per] : "");
    bars.push({ ...r, label, shown, unit,
                lo: r.value_ci_low !== null && scale !== null ? r.value_ci_low * scale : null,
                hi: r.value_ci_high !== null && scale !== null ? r.value_ci_high * scale : null,
                text: `${NUMBER.format(shown)} ${unit}` + (r.summary_only ? " (published)" : "") });
  }
  const box = document.createElement("div");
  for (const unit of [...new Set(bars.map((b) => b.unit))]) {
    const mine = bars.filter((b) => b.unit === unit);
    const lower = !mine[0].higher_is_better;
    mine.sort((a, b) => (lower ? a.shown - b.shown : b.shown - a.shown));
    const title = (b) => `${b.system_name} (${b.devices ?? "?"} × ${b.accelerator ?? "CPU"}), ${b.scenario}: ` +
      `${b.text}; ${b.summary_only ? "published by " + b.measured_by + ", no interval" : "measured by benchdb" +
      (b.lo !== null ? ` [${NUMBER.format(b.lo)}, ${NUMBER.format(b.hi)}]` : "")}`;
    const fig = document.createElement("figure");
    const cap = document.createElement("figcaption");
    cap.textContent = `${mine[0].model_id}: ${unit}${lower ? " (lower is better)" : ""}, best first`;
    fig.append(cap, labelled(Plot.plot({
      width: 860, height: 50 + 30 * mine.length, marginLeft: 230, marginRight: 260,
      x: { label: `${unit}${lower ? " (lower is better)" : ""}`, grid: true, zero: true },
      y: { label: null, domain: mine.map((b) => b.label) },
      marks: [
        Plot.barX(mine.filter((b) => !b.summary_only), { x: "shown", y: "label", fill: BLUE,
                                                         className: "bars-measured", title }),
        Plot.barX(mine.filter((b) => b.summary_only), { x: "shown", y: "label", fill: "url(#bdb-hatch)",
                                                        stroke: BLUE, strokeWidth: 1.5, strokeDasharray: "4,2",
                                                        className: "bars-published", title }),
        Plot.ruleY(mine.filter((b) => !b.summary_only && b.lo !== null), { y: "label", x1: "lo", x2: "hi",
                                                                           stroke: ORANGE, strokeWidth: 2 }),
        Plot.text(mine, { x: "shown", y: "label", text: "text", dx: 6, textAnchor: "start", className: "bar-values" }),
        Plot.ruleX([0]),
      ],
    }), `systems side by side: ${unit}, ${PER[per]}`));
    box.append(fig);
  }
  if (left.length) {
    const p = document.createElement("p");
    p.className = "not-drawn";
    p.textContent = "Not drawn " + PER[per] + ": " + left.join("; ");
    box.append(p);
  }
  return box;
}

function servingFronts(rows) {
  const pts = rows.filter((r) => r.interactivity !== null && r.value_per_accelerator !== null)
    .map((r) => ({ ...r, lengths: `in ${r.in_tokens ?? "?"} / out ${r.out_tokens ?? "?"} tokens`,
                   series: r.system_name + (r.summary_only ? " (published)" : " (measured)") }));
  const box = document.createElement("div");
  for (const lengths of [...new Set(pts.map((p) => p.lengths))]) {
    const mine = pts.filter((p) => p.lengths === lengths);
    const front = mine.filter((p) => p.on_front);
    const fig = document.createElement("figure");
    const cap = document.createElement("figcaption");
    cap.textContent = `${mine[0].model_id}, ${lengths}: each system's frontier of throughput per accelerator ` +
      "against interactivity (dashed, hollow: published)";
    const title = (p) => `${p.series}, ${p.input_shape}: ${NUMBER.format(p.value_per_accelerator)} tokens/s per ` +
      `accelerator (${p.devices ?? "?"} × ${p.accelerator ?? "?"}), ${NUMBER.format(p.interactivity)} tokens/s per user`;
    fig.append(cap, labelled(Plot.plot({
      width: 860, height: 320, marginLeft: 60,
      color: { range: COLORS, legend: true },
      x: { label: "interactivity (tokens/s per user)", grid: true, zero: true },
      y: { label: "total throughput (tokens/s per accelerator)", grid: true, zero: true },
      marks: [
        Plot.line(front.filter((p) => !p.summary_only), { x: "interactivity", y: "value_per_accelerator",
          stroke: "system_name", z: "series", sort: "interactivity", className: "front-measured" }),
        Plot.line(front.filter((p) => p.summary_only), { x: "interactivity", y: "value_per_accelerator",
          stroke: "system_name", z: "series", sort: "interactivity", strokeDasharray: "5,3",
          className: "front-published" }),
        Plot.dot(mine.filter((p) => !p.summary_only), { x: "interactivity", y: "value_per_accelerator",
          fill: "system_name", r: 3.5, title }),
        Plot.dot(mine.filter((p) => p.summary_only), { x: "interactivity", y: "value_per_accelerator",
          stroke: "system_name", fill: "none", r: 3.5, title }),
      ],
    }), `serving frontier per system: ${lengths}`));
    box.append(fig);
  }
  return box;
}

function systemsPage(spec, doc, filters) {
  const all = rec(doc);
  const model = filters.model || (all[0] && all[0].model_id);
  const rows = all.filter((r) => r.model_id === model);
  const per = PER[filters.per] ? filters.per : "system";
  systemsControls(spec, filters, rows);
  const box = document.createElement("div");
  box.className = "systems";
  const head = document.createElement("p");
  head.className = "normalisation";
  head.textContent = model ? `${model}: every system ${PER[per]}` +
    (filters.model ? "" : " (the first model; choose another above)") : "No figures for these filters.";
  box.append(hatchDefs(), head, legend());
  const headline = rows.filter((r) => r.kind === "headline");
  if (headline.length) box.append(systemBars(headline, per, filters));
  const serving = rows.filter((r) => r.kind === "serving");
  if (serving.length) box.append(servingFronts(serving));
  return box;
}

// The matrix as families x (hardware, backend): each cell its rating, linked to the latest results
// it counts (then to a series' history, then to raw samples).
function matrixTable(doc) {
  const col = (name) => doc.columns.indexOf(name);
  const keys = [...new Set(doc.rows.map((r) => `${r[col("hardware_name")]}\u0000${r[col("backend")]}`))].sort();
  const families = [...new Set(doc.rows.map((r) => r[col("family")]))].sort();
  const t = document.createElement("table");
  t.setAttribute("aria-label", "compatibility matrix");
  const head = t.createTHead().insertRow();
  head.append(Object.assign(document.createElement("th"), { textContent: "family", scope: "col" }));
  for (const k of keys) {
    const [hw, be] = k.split("\u0000");
    head.append(Object.assign(document.createElement("th"), { textContent: `${hw} · ${be}`, scope: "col" }));
  }
  const body = t.createTBody();
  for (const fam of families) {
    const tr = body.insertRow();
    tr.append(Object.assign(document.createElement("th"), { textContent: fam ?? "(none)", scope: "row" }));
    for (const k of keys) {
      const [hw, be] = k.split("\u0000");
      const r = doc.rows.find((x) => x[col("family")] === fam && x[col("hardware_name")] === hw && x[col("backend")] === be);
      const td = tr.insertCell();
      if (!r) continue;
      td.classList.add(`rating-${r[col("rating_label")]}`);
      const a = document.createElement("a");
      a.href = href("results", Object.fromEntries(Object.entries({ hardware: hw, backend: be, family: fam })
        .filter(([, v]) => v !== null && v !== undefined)));
      a.textContent = `${r[col("rating_label")]}`;
      a.title = `${fam} on ${hw} with ${be}: ${r[col("ok")]} of ${r[col("results")]} ran ok`;
      a.className = "matrix-cell";
      td.append(a);
    }
  }
  return t;
}

function filterForm(spec, filters, doc) {
  const form = $("filters");
  form.replaceChildren();
  for (const f of spec.filters) {
    const label = document.createElement("label");
    label.textContent = f;
    const choices = (spec.choices || {})[f];
    const input = document.createElement(choices ? "select" : "input");
    input.name = f;
    if (choices) {
      for (const c of ["", ...choices]) {
        const o = document.createElement("option");
        o.value = c;
        o.textContent = c || "(default)";
        input.append(o);
      }
    }
    input.value = filters[f] || "";
    const column = spec.columns[f];
    if (column && doc && !choices) {
      const i = doc.columns.indexOf(column);
      const list = document.createElement("datalist");
      list.id = `values-${f}`;
      for (const v of [...new Set(doc.rows.map((r) => r[i]))].sort()) {
        const o = document.createElement("option");
        o.value = v;
        list.append(o);
      }
      input.setAttribute("list", list.id);
      label.append(list);
    }
    formField(spec, label, input);
  }
  form.onsubmit = (e) => e.preventDefault();
}

// A field of the filter form: a change puts the whole form into the URL and draws the page again.
function formField(spec, label, input) {
  const form = $("filters");
  input.addEventListener("change", () => {
    const next = Object.fromEntries(new FormData(form));
    history.pushState(null, "", href(spec.name, Object.fromEntries(Object.entries(next).filter(([, v]) => v))));
    render();
  });
  label.append(input);
  form.append(label);
}

function linkLine(target, text) {
  const a = document.createElement("a");
  a.href = target;
  a.textContent = text;
  const p = document.createElement("p");
  p.append(a);
  return p;
}

let CATALOG = null;

async function render() {
  const { view, filters } = state();
  const status = $("status");
  status.className = "";
  status.textContent = "Loading…";
  try {
    CATALOG = CATALOG || (await getJSON(MODE === "server" ? "api/views" : "data/views.json"));
    const nav = $("nav");
    nav.replaceChildren(...CATALOG.views.filter((v) => !v.required.length).map((v) => {
      const a = document.createElement("a");
      a.href = href(v.name, {});
      a.textContent = v.title;
      if (v.name === view) a.setAttribute("aria-current", "page");
      return a;
    }));
    const spec = CATALOG.views.find((v) => v.name === view);
    if (!spec) throw new Error(`no view ${view}`);
    const doc = await load(view, filters, CATALOG);
    $("title").textContent = spec.title;
    document.title = `benchdb · ${spec.title}`;
    filterForm(spec, filters, doc);
    const chart = $("chart");
    chart.replaceChildren();
    if (view === "trends") {
      const c = trendChart(doc);
      if (c) chart.append(c);
    } else if (view === "samples") {
      if (doc.command) {
        const pre = document.createElement("pre");
        pre.textContent = doc.command;
        pre.setAttribute("aria-label", "the command that measures this result again");
        chart.append(pre);
      }
      if (doc.statistics) chart.append(statisticsTable(doc.statistics));
      chart.append(sampleCharts(doc));
    } else if (view === "matrix") {
      chart.append(matrixTable(doc));
    } else if (view === "frontier" || view === "serving") {
      if (MODE === "server") {
        chart.append(linkLine(href("slo", { ttft_ms: "1000", tpot_ms: "100" }),
                              "The best configuration at an SLO (TTFT p90, TPOT p50)"));
      }
      const c = frontierChart(doc);
      if (c) chart.append(c);
    } else if (view === "systems") {
      chart.append(systemsPage(spec, doc, filters));
    } else if (view === "compare") {
      chart.append(linkLine(href("environment", filters), "How the two runs' environments differ"));
      const f = forest(doc);
      if (f) chart.append(f);
      const h = compareHistograms(await load("compare_samples", filters, CATALOG));
      if (h) chart.append(h);
    }
    $("table").replaceChildren(table(doc, view));
    status.textContent = `${doc.rows.length} row(s)` +
      (doc.truncated ? ", the first in order: there are more; filter to narrow them" : "") +
      (doc.rows.length > SHOWN ? `; the table lists the first ${SHOWN}` : "");
  } catch (err) {
    status.className = "error";
    status.textContent = String(err.message || err);
  }
}

window.addEventListener("popstate", render);
render();
