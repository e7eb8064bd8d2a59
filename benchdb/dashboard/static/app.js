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

async function load(view, filters, catalog) {
  if (MODE === "server") {
    return getJSON(`api/${encodeURIComponent(view)}?` + new URLSearchParams(filters));
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

function cell(col, value, rec) {
  const td = document.createElement("td");
  if (value === null || value === undefined) return td;
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
    td.className = "num";
    td.textContent = NUMBER.format(value);
  } else {
    td.textContent = String(value);
  }
  return td;
}

// A table of more rows than this is cut on screen (the charts and the JSON have them all).
const SHOWN = 2000;

function table(doc) {
  const t = document.createElement("table");
  const head = t.createTHead().insertRow();
  for (const c of doc.columns) {
    const th = document.createElement("th");
    th.scope = "col";
    th.textContent = c;
    head.append(th);
  }
  const body = t.createTBody();
  for (const row of doc.rows.slice(0, SHOWN)) {
    const tr = body.insertRow();
    const rec = Object.fromEntries(doc.columns.map((c, i) => [c, row[i]]));
    row.forEach((v, i) => tr.append(cell(doc.columns[i], v, rec)));
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

// The median of each run with its 95 % CI as a band, in ms; change points marked (hollow: acknowledged).
function trendChart(doc) {
  const pts = rec(doc).map((r) => ({ ...r, t: new Date(r.run_started_at), m: r.median * 1e3,
                                     lo: (r.median_ci_low ?? r.median) * 1e3, hi: (r.median_ci_high ?? r.median) * 1e3 }));
  if (!pts.length) return null;
  const cps = pts.filter((p) => p.change_id);
  return labelled(Plot.plot({
    width: 760, height: 280, marginLeft: 60,
    x: { label: "run started (UTC)", type: "time" },
    y: { label: "median (ms)", grid: true },
    marks: [
      Plot.areaY(pts, { x: "t", y1: "lo", y2: "hi", fill: BLUE, fillOpacity: 0.2 }),
      Plot.lineY(pts, { x: "t", y: "m", stroke: BLUE }),
      Plot.dot(pts, { x: "t", y: "m", r: 2.5, fill: BLUE,
                      title: (p) => `${p.run_started_at}: ${NUMBER.format(p.m)} ms [${NUMBER.format(p.lo)}, ${NUMBER.format(p.hi)}]` }),
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
    const k = `${r.metric} (${r.unit})`;
    if (!by.has(k)) by.set(k, []);
    by.get(k).push(r.value);
  }
  const box = document.createElement("div");
  for (const [name, values] of by) {
    const med = d3.median(values);
    const sorted = Float64Array.from(values).sort();
    const ecdf = Array.from(sorted, (v, i) => ({ v, p: (i + 1) / sorted.length }));
    const fig = document.createElement("figure");
    const cap = document.createElement("figcaption");
    cap.textContent = `${name}: n = ${values.length}, median ${NUMBER.format(med)}`;
    fig.append(cap, labelled(Plot.plot({
      width: 420, height: 200, marginLeft: 50,
      x: { label: name }, y: { label: "samples", grid: true },
      marks: [Plot.rectY(values, Plot.binX({ y: "count" }, { x: (v) => v, fill: BLUE })),
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
                    rows: stats.rows.map((r) => r.filter((_, i) => !SCENARIO.has(stats.columns[i]))) });
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
    input.addEventListener("change", () => {
      const next = Object.fromEntries(new FormData(form));
      history.pushState(null, "", href(spec.name, Object.fromEntries(Object.entries(next).filter(([, v]) => v))));
      render();
    });
    label.append(input);
    form.append(label);
  }
  form.onsubmit = (e) => e.preventDefault();
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
    } else if (view === "compare") {
      chart.append(linkLine(href("environment", filters), "How the two runs' environments differ"));
      const f = forest(doc);
      if (f) chart.append(f);
      const h = compareHistograms(await load("compare_samples", filters, CATALOG));
      if (h) chart.append(h);
    }
    $("table").replaceChildren(table(doc));
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
