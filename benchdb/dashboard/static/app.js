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
  if (view === "trends") return getJSON(`data/trends/${encodeURIComponent(filters.series)}.json`);
  if (view === "samples") return getJSON(`data/samples/${encodeURIComponent(filters.result)}.json`);
  if (view === "compare" || view === "environment") {
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
  for (const row of doc.rows) {
    const tr = body.insertRow();
    const rec = Object.fromEntries(doc.columns.map((c, i) => [c, row[i]]));
    row.forEach((v, i) => tr.append(cell(doc.columns[i], v, rec)));
  }
  return t;
}

function svg(tag, attrs, text) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

// The median of each run with its 95 % CI as a band; change points marked, seconds shown in ms.
function trendChart(doc) {
  const col = (name) => doc.columns.indexOf(name);
  const pts = doc.rows.map((r) => ({ t: r[col("run_started_at")], m: r[col("median")], lo: r[col("median_ci_low")],
                                     hi: r[col("median_ci_high")], cp: r[col("change_id")],
                                     acked: r[col("change_status")] === "acked" }));
  if (!pts.length) return null;
  const W = 720, H = 270, L = 60, B = 30, T = 24, R = 10;
  const ys = pts.flatMap((p) => [p.m, p.lo ?? p.m, p.hi ?? p.m]);
  const y0 = Math.min(...ys), y1 = Math.max(...ys), span = y1 - y0 || y1 || 1;
  const x = (i) => L + (pts.length === 1 ? (W - L - R) / 2 : (i * (W - L - R)) / (pts.length - 1));
  const y = (v) => T + (H - T - B) * (1 - (v - (y0 - 0.05 * span)) / (1.1 * span));
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img",
                         "aria-label": "median per run with its 95% CI; change points marked" });
  const band = pts.map((p, i) => `${x(i)},${y(p.hi ?? p.m)}`).concat(
    pts.map((p, i) => `${x(i)},${y(p.lo ?? p.m)}`).reverse());
  s.append(svg("polygon", { class: "band", points: band.join(" ") }));
  s.append(svg("polyline", { class: "line", points: pts.map((p, i) => `${x(i)},${y(p.m)}`).join(" ") }));
  pts.forEach((p, i) => {
    const dot = svg("circle", { cx: x(i), cy: y(p.m), r: p.cp ? 5 : 2.5,
                                class: p.cp ? (p.acked ? "mark acked" : "mark") : "line" });
    const what = p.cp ? (p.acked ? " (change point, acknowledged)" : " (change point, open)") : "";
    dot.append(svg("title", {}, `${p.t}: ${NUMBER.format(p.m * 1e3)} ms${what}`));
    s.append(dot);
  });
  s.append(svg("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }));
  s.append(svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
  for (const v of [y0, (y0 + y1) / 2, y1]) {
    s.append(svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, NUMBER.format(v * 1e3)));
  }
  s.append(svg("text", { x: 4, y: 12 }, "median (ms), band: its 95 % CI"));
  s.append(svg("text", { x: (W + L) / 2, y: H - 8, "text-anchor": "middle" }, "run (oldest left)"));
  return s;
}

// Per scenario, the change between two runs: a dot at the change, a bar over the interval the two
// medians' CIs allow; the zero line is no change.
function forest(doc) {
  const col = (name) => doc.columns.indexOf(name);
  const rows = doc.rows.filter((r) => r[col("change")] !== null);
  if (!rows.length) return null;
  const W = 720, row = 18, L = 260, R = 20, T = 24, H = T + rows.length * row + 24;
  const xs = rows.flatMap((r) => [r[col("change_low")] ?? r[col("change")], r[col("change_high")] ?? r[col("change")], 0]);
  const x0 = Math.min(...xs), x1 = Math.max(...xs), span = x1 - x0 || 1;
  const x = (v) => L + ((v - x0) / span) * (W - L - R);
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: "img",
                         "aria-label": "change per scenario, candidate against base, with the interval its medians allow" });
  s.append(svg("line", { class: "axis", x1: x(0), y1: T - 6, x2: x(0), y2: H - 20 }));
  rows.forEach((r, i) => {
    const y = T + i * row + row / 2;
    const name = `${r[col("model_id")]} ${r[col("backend")]} bs=${r[col("batch_size")]} ${r[col("input_shape")]}`;
    s.append(svg("text", { x: L - 8, y: y + 4, "text-anchor": "end" }, name.slice(0, 42)));
    s.append(svg("line", { class: "line", x1: x(r[col("change_low")] ?? r[col("change")]), y1: y,
                           x2: x(r[col("change_high")] ?? r[col("change")]), y2: y }));
    s.append(svg("circle", { class: "mark", cx: x(r[col("change")]), cy: y, r: 3.5 }));
  });
  for (const [v, anchor] of [[x0, "start"], [0, "middle"], [x1, "end"]]) {
    s.append(svg("text", { x: x(v), y: H - 6, "text-anchor": anchor }, `${NUMBER.format(v * 100)} %`));
  }
  s.append(svg("text", { x: L, y: 12 }, "change of the median (candidate / base - 1; right: slower)"));
  return s;
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

// One histogram per metric of a result's raw samples, with n and the median.
function sampleCharts(doc) {
  const col = (name) => doc.columns.indexOf(name);
  const by = new Map();
  for (const r of doc.rows) {
    const k = `${r[col("metric")]} (${r[col("unit")]})`;
    if (!by.has(k)) by.set(k, []);
    by.get(k).push(r[col("value")]);
  }
  const box = document.createElement("div");
  for (const [name, values] of by) {
    const sorted = [...values].sort((a, b) => a - b);
    const med = sorted[Math.floor((sorted.length - 1) / 2)] / 2 + sorted[Math.ceil((sorted.length - 1) / 2)] / 2;
    const lo = sorted[0], hi = sorted[sorted.length - 1], bins = 20, w = (hi - lo) / bins || 1;
    const counts = new Array(bins).fill(0);
    for (const v of sorted) counts[Math.min(bins - 1, Math.floor((v - lo) / w))] += 1;
    const W = 360, H = 120, top = Math.max(...counts);
    const s = svg("svg", { viewBox: `0 0 ${W} ${H + 30}`, width: W, height: H + 30, role: "img",
                           "aria-label": `histogram of ${name}` });
    counts.forEach((c, i) => s.append(svg("rect", { class: "bar", x: (i * W) / bins + 1, width: W / bins - 2,
                                                    y: H - (H * c) / top, height: (H * c) / top })));
    const unit = name.slice(name.lastIndexOf("(") + 1, -1);
    s.append(svg("text", { x: 0, y: H + 14 }, `${NUMBER.format(lo)} ${unit}`));
    s.append(svg("text", { x: W, y: H + 14, "text-anchor": "end" }, `${NUMBER.format(hi)} ${unit}`));
    s.append(svg("text", { x: W / 2, y: H + 28, "text-anchor": "middle" }, `${name}; bar height: samples`));
    const fig = document.createElement("figure");
    const cap = document.createElement("figcaption");
    cap.textContent = `${name}: n = ${values.length}, median ${NUMBER.format(med)}`;
    fig.append(cap, s);
    box.append(fig);
  }
  return box;
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
      chart.append(sampleCharts(doc));
    } else if (view === "matrix") {
      chart.append(matrixTable(doc));
    } else if (view === "compare") {
      const a = document.createElement("a");
      a.href = href("environment", filters);
      a.textContent = "How the two runs' environments differ";
      const p = document.createElement("p");
      p.append(a);
      chart.append(p);
      const f = forest(doc);
      if (f) chart.append(f);
    }
    $("table").replaceChildren(table(doc));
    status.textContent = `${doc.rows.length} row(s)` +
      (doc.truncated ? " shown, the first in order: there are more; filter to narrow them" : "");
  } catch (err) {
    status.className = "error";
    status.textContent = String(err.message || err);
  }
}

window.addEventListener("popstate", render);
render();
