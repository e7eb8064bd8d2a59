// The benchdb dashboard page: one script, no build step. The URL holds the view and every filter
// (?view=results&model=...), so a link or a reload reproduces what is on screen. Data comes from
// the server's /api (benchdb dashboard) or from data/*.json (benchdb site: filtered here).
"use strict";

const MODE = document.querySelector('meta[name="benchdb-mode"]').content;
const $ = (id) => document.getElementById(id);
const NUMBER = new Intl.NumberFormat("en", { maximumSignificantDigits: 4 });

function state() {
  const q = new URLSearchParams(location.search);
  const view = q.get("view") || "home";
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

// The normalisation called ``name`` (?per=), as the catalog lists them (the SQL's one list of them, in
// the order offered: the first is the default, also for a name it does not know).
function normalisationOf(name) {
  const all = CATALOG.normalisations;
  return all.find((n) => n.name === name) || all[0];
}

// The systems page's prices (USD per hour): ?price:<accelerator>=, ?system_price:<system>=.
const PRICE = /^(system_)?price:/;

async function load(view, filters, catalog) {
  if (MODE === "server") return getJSON(`api/${encodeURIComponent(view)}?` + new URLSearchParams(filters));
  const spec = catalog.views.find((v) => v.name === view);
  if (view === "slo") throw new Error("an SLO is computed by the server: run `benchdb dashboard` for this view");
  if (view === "trends" || view === "samples") return loadPacked(view, filters, catalog);
  if (view === "compare" || view === "compare_samples" || view === "environment") {
    return getJSON(`data/${view}/${encodeURIComponent(filters.base)}__${encodeURIComponent(filters.cand)}.json`);
  }
  if (view === "optimal" && filters.max_latency_ms) {
    throw new Error("a latency limit is computed by the server: run `benchdb dashboard` for max_latency_ms");
  }
  if (view === "systems" && Object.keys(filters).some((f) => PRICE.test(f))) {
    throw new Error("a price is computed by the server: run `benchdb dashboard` to normalise by your prices");
  }
  const objective = filters.objective || "throughput";
  const per = filters.per && filters.per !== catalog.normalisations[0].name ? `__${filters.per}` : "";
  const file = view === "optimal" ? `optimal__${objective}${objective === "throughput" ? per : ""}`
    : view === "systems" ? `systems${per}` : view;
  const doc = await getJSON(`data/${encodeURIComponent(file)}.json`);
  const keep = Object.entries(filters).filter(([f]) => spec.columns[f])
    .map(([f, v]) => [doc.columns.indexOf(spec.columns[f]), v]);
  doc.rows = doc.rows.filter((row) => keep.every(([i, v]) => i < 0 || String(row[i]) === v));
  doc.filters = filters;
  return doc;
}

// A series' history or a result's raw samples from the file of the static site that holds it (many to a
// file: packed.js), as the server's view sends it; one the file lacks has none (no valid result, no
// samples), as the server answers too.
async function loadPacked(view, filters, catalog) {
  const spec = catalog.views.find((v) => v.name === view);
  const id = view === "trends" ? filters.series : filters.result;
  const file = `data/${view}/${PACKED.shardOf(id, catalog.site.shards[view])}`;
  const doc = { view, title: spec.title, filters, columns: [], rows: [], truncated: false };
  if (view === "trends") {
    const shard = await getJSON(`${file}.json`);
    return { ...doc, columns: shard.columns || [], rows: shard.series[id] || [], truncated: shard.truncated.includes(id) };
  }
  const resp = await fetch(`${file}.bin`, { cache: "no-store" });
  if (!resp.ok) throw new Error(`${file}.bin: ${resp.status} ${resp.statusText}`);
  return { ...doc, statistics: null, command: null, ...PACKED.samples(await resp.arrayBuffer(), id) };
}

// Where a run's results are listed: the results view (those still the latest of their series),
// or, for a run of published figures of one model (only_model, from the runs view), the systems page.
function runResults(rec, text) {
  if (rec.only_model) {
    return anchor(href("systems", { model: rec.only_model }), text,
                  `${rec.run_id}: published figures: every system of ${rec.only_model} side by side`);
  }
  return anchor(href("results", { run: rec.run_id }), text,
                `${rec.run_id}: this run's results (those still the latest of their series)`);
}

// One cell; ``show`` formats a number in its column's unit (FMT.column), ``drill`` links the row's
// first cell to its result's raw samples, ``short`` shortens an id (unique among the page's ids).
function cell(col, value, rec, show, drill, short) {
  const td = document.createElement("td");
  if (value === null || value === undefined) return td;
  if (col === "rating_label" || col === "rating") td.classList.add(`rating-${value}`);
  if (drill) {
    const a = anchor(href("samples", { result: drill }), typeof value === "number" && show ? show(value) : String(value),
                     "raw samples of this result");
    td.append(a);
    return td;
  }
  if (col === "results" && rec.run_id && rec.previous_run_id !== undefined) {   // a run's results
    td.classList.add("num");
    if (rec.latest_results > 0 || rec.only_model) td.append(runResults(rec, String(value)));
    else {
      td.textContent = String(value);
      td.title = "no result of this run is the latest valid one of its series";
    }
  } else if (col === "run_id") {
    td.append(runResults(rec, short(value)));
  } else if (col === "previous_run_id") {
    const a = anchor(href("compare", { base: value, cand: rec.run_id }), short(value),
                     "compare this run with the one before it");
    td.title = String(value);   // the whole id of the run before
    td.append(a);
  } else if (col === "series_id") {
    const a = anchor(href("trends", { series: value }), short(value), "history of this series");
    td.title = String(value);   // the whole id (the link says where it goes)
    td.append(a);
  } else if (col === "result_id" || col === "base_result_id" || col === "cand_result_id") {
    const a = anchor(href("samples", { result: value }), short(value), "raw samples of this result");
    td.title = String(value);
    td.append(a);
  } else if (typeof value === "number") {
    td.classList.add("num");
    td.textContent = show ? show(value) : NUMBER.format(value);
  } else {
    const text = FMT.words(String(value));
    // a cell wraps at its spaces, not inside "2026-11-29", "opt-all" or "mlperf-loadgen" (a word too long
    // for a line still breaks at its dashes, and after its commas: "scenario=Offline,mode=...")
    if (/[-,]/.test(text)) {
      const long = (w) => w.split(/(?<=,)/).flatMap((part, k) => (k ? [document.createElement("wbr"), part] : [part]));
      text.split(" ").forEach((w, i) => td.append(...(i ? [" "] : []), ...(w.length > 24 ? long(w)
        : [Object.assign(document.createElement("span"), { className: "word", textContent: w })])));
    } else td.textContent = text;
    if (text.length > 24) td.classList.add("wrap");
  }
  return td;
}

// Columns of ids, shortened together: a run's id reads the same as a run id and as a previous run.
const IDS = /(^|_)(run|result|series)_id$/;

// What names a series (the trends page says it once).
const SERIES = ["series_id", "model_id", "backend", "device", "mode", "precision", "batch_size", "input_shape",
                "hardware_name"];

// A measured value and the statistics of one metric's values: in that metric's unit.
const STATS = /^(value|median|mean|min|max|stddev|p\d+|median_ci_(low|high))$/;

// A table of more rows than this is cut on screen (the charts and the JSON have them all).
const SHOWN = 2000;

// Headings in words (the SQL name in the tooltip), each numeric column in one unit.
function table(doc, view) {
  const t = document.createElement("table");
  const rows = doc.rows.slice(0, SHOWN);
  // a column empty on every row (no commit for imported runs) takes no width
  const empty = (c) => rows.length > 0
    && rows.every((r) => r[doc.columns.indexOf(c)] === null || r[doc.columns.indexOf(c)] === "");
  // a series' history: what names the series is the same on every row, said once above the table
  const same = (c) => view === "trends" && rows.length > 1 && SERIES.includes(c)
    && rows.every((r) => r[doc.columns.indexOf(c)] === rows[0][doc.columns.indexOf(c)]);
  const cols = FMT.shown(doc.columns).filter((c) => !empty(c) && !same(c));
  const named = doc.columns.filter((c) => same(c) && !empty(c));
  if (named.length) {
    t.createCaption().textContent = named.map((c) => `${FMT.label(c)} ${rows[0][doc.columns.indexOf(c)]}`).join(" · ");
  }
  const at = cols.map((c) => doc.columns.indexOf(c));
  const show = Object.fromEntries(cols.map((c, j) => [c, FMT.column(c, rows.map((r) => r[at[j]]))]));
  // a column shown per row on the scale of the values of its group (rows sharing ``key``), in that
  // group's unit; the column naming the unit then goes, since every such cell says it
  const grouped = (c, key, unitOf, scaleOf) => {
    const j = doc.columns.indexOf(c), of = {}, units = {};
    for (const r of rows) {
      (of[r[key]] ??= []).push(r[j]);
      units[r[key]] = unitOf(r);
    }
    const scales = Object.fromEntries(Object.entries(of).map(([k, vs]) => [k, scaleOf(vs, units[k] || "")]));
    return (v, rec) => scales[rec[doc.columns[key]]](v);
  };
  const drop = (c) => {
    const k = cols.indexOf(c);
    if (k >= 0) {
      cols.splice(k, 1);
      at.splice(k, 1);
    }
  };
  // the systems page's normalised figure: each row in its own normalised unit
  const normUnit = doc.columns.indexOf("normalised_unit");
  if (normUnit >= 0 && cols.includes("normalised")) {
    show.normalised = grouped("normalised", normUnit, (r) => r[normUnit], FMT.rateScale);
    drop("normalised_unit");
  }
  // a value or statistic of rows of several metrics (raw samples, results): each row in its own metric's
  // unit (FMT.quantity's rule), on the scale of that metric's values in the column
  // (rows without a metric column, the systems page's figures, go by their unit alone)
  const unit = doc.columns.indexOf("unit"), metric = doc.columns.includes("metric") ? doc.columns.indexOf("metric") : unit;
  const stats = cols.filter((c) => STATS.test(c) && show[c]);
  if (unit >= 0 && metric >= 0 && stats.length) {
    const scaleOf = (vs, u) => (u === "s" ? FMT.timeScale(vs) : u === "bytes" ? FMT.sizeScale(vs) : FMT.rateScale(vs, u));
    for (const c of stats) show[c] = grouped(c, metric, (r) => r[unit], scaleOf);
    drop("unit");
  }
  const ids = at.filter((i, j) => IDS.test(cols[j]));
  const short = FMT.shortIds(rows.flatMap((r) => ids.map((i) => r[i])));
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
    const drill = view === "samples" ? null : rec.result_id ?? null;
    cols.forEach((c, j) => tr.append(cell(c, row[at[j]], rec, show[c] && ((v) => show[c](v, rec)),
                                          j === 0 && drill !== null && !/(result|run|series)_id$/.test(c) ? drill : null,
                                          short)));
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
    // a labelled choice (the normalisations) names its default, the first, rather than "(default)"
    const labels = choices ? (spec.choice_labels || {})[f] || {} : {};
    const named = choices && choices.every((c) => labels[c]);
    if (choices) {
      for (const c of named ? choices : ["", ...choices]) {
        const o = document.createElement("option");
        o.value = c;
        o.textContent = c ? labels[c] || c : "(default)";
        input.append(o);
      }
    }
    input.value = filters[f] || (named ? choices[0] : "");
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

// A link; ``title`` (optional) says where it goes.
function anchor(target, text, title = "") {
  const a = document.createElement("a");
  a.href = target;
  a.textContent = text;
  if (title) a.title = title;
  return a;
}

function linkLine(target, text) {
  const a = anchor(target, text);
  const p = document.createElement("p");
  p.append(a);
  return p;
}

// The systems page's table: what tells two marks apart, the figure, and the result behind it.
const SYSTEM_COLUMNS = ["result_id", "system_name", "submitter", "backend", "mode", "precision", "batch_size",
                        "input_shape", "rank", "normalised", "normalised_unit", "missing", "value", "unit",
                        "accelerators", "nodes", "summary_only", "interactivity"];

function only(doc, columns) {
  const keep = columns.filter((c) => doc.columns.includes(c));
  const at = keep.map((c) => doc.columns.indexOf(c));
  return { ...doc, columns: keep, rows: doc.rows.map((r) => at.map((i) => r[i])) };
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
    nav.replaceChildren(...[{ name: "home", title: "Answers" }, ...CATALOG.views.filter((v) => !v.required.length)]
      .map((v) => {
        const a = anchor(v.name === "home" ? "?" : href(v.name, {}), v.title);
        if (v.name === view) a.setAttribute("aria-current", "page");
        return a;
      }));
    if (view === "home") {
      $("title").textContent = "What the warehouse answers";
      document.title = "benchdb";
      $("filters").replaceChildren();
      $("table").replaceChildren();
      const { box, rows } = await homePage();
      $("chart").replaceChildren(box);
      status.textContent = `${rows} answer(s)`;
      return;
    }
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
      if (doc.quantised && Object.keys(doc.quantised).length) chart.append(quantisedNote(doc.quantised));
      chart.append(sampleCharts(doc));
    } else if (view === "matrix") {
      chart.append(matrixTable(doc));
    } else if (view === "frontier" || view === "serving") {
      if (MODE === "server") {
        chart.append(linkLine(href("slo", { ttft_ms: "1000", tpot_ms: "100" }),
                              "The best configuration at an SLO (TTFT p90, TPOT p50)"));
      }
      const c = view === "frontier" ? frontierChart(doc) : servingCharts(doc, filters);
      if (c) chart.append(c);
    } else if (view === "systems") {
      chart.append(systemsPage(spec, doc, filters));
    } else if (view === "optimal") {
      chart.append(optimalPage(doc));
    } else if (view === "compare") {
      chart.append(linkLine(href("environment", filters), "How the two runs' environments differ"));
      chart.append(...(await comparePage(doc, filters)));
    }
    $("table").replaceChildren(view === "optimal" ? optimalTable(rec(doc))
      : table(view === "systems" ? only(doc, SYSTEM_COLUMNS) : doc, view));
    const wide = $("table").querySelector("table:not(.answers)");   // wider than the window: a smaller type
    if (wide && wide.scrollWidth > $("table").clientWidth) wide.classList.add("dense");
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
