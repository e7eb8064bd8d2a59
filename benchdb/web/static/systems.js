// The systems page: every system's headline figure for one model, and serving frontiers.
// Classic script sharing the page's globals (app.js: rec, labelled, COLORS; fmt.js: FMT).
"use strict";

// Systems side by side for one model: a ranked dot-and-interval chart per batch size and input shape
// (a scenario's is in its input shape), one mark per result, of its headline figure normalised as ?per=
// says (a normalisation of the catalog; prices as ?price:<accelerator>=USD per accelerator-hour and
// ?system_price:<system>=USD per hour), best first. The server normalises and ranks (the SQL behind
// `benchdb report --optimal-hardware --per`); the page draws what it sent, in its order. Measured marks
// are solid dots on their 95 % interval; published (summary-only) ones are hollow, with no interval:
// they have no samples. For serving, each system's frontier of throughput per accelerator against
// interactivity, published ones dashed.

// Text widths for sizing a chart's margins to its labels (Plot draws 10px system-ui).
const MEASURE = document.createElement("canvas").getContext("2d");
function textWidth(text, px = 10) {
  MEASURE.font = `${px}px system-ui, sans-serif`;
  return MEASURE.measureText(text).width;
}

// ``head`` + ``tail`` within ``width`` px: the middle of ``head`` gives way ("NVIDIA DG…TensorRT)"),
// ``tail`` (what tells two labels apart) is kept whole.
function fitted(head, tail, width) {
  if (textWidth(head + tail) <= width) return head + tail;
  const cut = (keep) => head.slice(0, Math.ceil(keep * 0.6)) + "…" + head.slice(head.length - Math.floor(keep * 0.4));
  let keep = head.length - 1;
  while (keep > 6 && textWidth(cut(keep) + tail) > width) keep--;
  return cut(keep) + tail;
}

// A ranked dot-and-interval chart, one row per item: {key (unique), head, tail (label parts), x, lo, hi
// (the 95 % interval, null when none), hollow (a published figure: no interval), text (the value with
// its unit, right of the mark), tip (hover)}; ``rule``: a reference line at that x; ``format``: the ticks';
// ``type``, ``constant``, ``ticks``: the x scale's (a symlog axis and its ticks). Labels are sized to
// fit, abbreviated in the middle where too long, the whole label on hover (<title>); the chart takes
// the width it is given.
function dotChart(items, { width, xLabel, aria, rule, format, type, constant, ticks }) {
  const labelRoom = Math.max(160, width * 0.42);
  for (const it of items) it.label = fitted(it.head, it.tail, labelRoom - 14);
  // two labels that abbreviate alike are told apart by their result
  const seen = new Map();
  for (const it of items) seen.set(it.label, (seen.get(it.label) || 0) + 1);
  for (const it of items) if (seen.get(it.label) > 1) it.label = fitted(it.head, `${it.tail} #${it.key.slice(-8)}`, labelRoom - 14);
  const marginLeft = Math.ceil(Math.max(...items.map((it) => textWidth(it.label)))) + 16;
  const marginRight = Math.ceil(Math.max(...items.map((it) => textWidth(it.text)))) + 20;
  const byKey = new Map(items.map((it) => [it.key, it]));
  const plotWidth = width - marginLeft - marginRight;
  if (Array.isArray(ticks)) {   // given ticks, thinned so that no two labels meet
    const top = Math.max(...items.map((it) => Math.max(it.x, it.hi ?? it.x)), ...ticks.slice(0, 1));
    const at = (type === "symlog" ? d3.scaleSymlog().constant(constant ?? 1) : d3.scaleLinear())
      .domain([0, top]).range([0, plotWidth]);
    let last = -Infinity;
    ticks = ticks.filter((t) => (at(t) - last >= 64 ? ((last = at(t)), true) : false));
  }
  const end = (it) => Math.max(it.x, it.hi ?? it.x);
  const chart = Plot.plot({
    width, height: 46 + 22 * items.length, marginLeft, marginRight,
    x: { label: xLabel, grid: true, zero: true, ...(format ? { tickFormat: format } : {}),
         ...(type ? { type, constant } : {}), ticks: ticks ?? Math.max(3, Math.floor(plotWidth / 90)) },
    y: { label: null, domain: items.map((it) => it.key), tickFormat: (k) => byKey.get(k).label },
    marks: [
      Plot.ruleY(items, { y: "key", x1: 0, x2: "x", stroke: "#8c959f", strokeOpacity: 0.35 }),
      ...(rule === undefined ? [] : [Plot.ruleX([rule], { stroke: ORANGE, strokeDasharray: "4,3" })]),
      Plot.ruleY(items.filter((it) => it.lo !== null && it.hi !== null), { y: "key", x1: "lo", x2: "hi",
        stroke: BLUE, strokeWidth: 2.5, className: "mark-interval" }),
      Plot.dot(items.filter((it) => !it.hollow), { x: "x", y: "key", r: 4.5, fill: BLUE, title: "tip",
        className: "mark-measured" }),
      Plot.dot(items.filter((it) => it.hollow), { x: "x", y: "key", r: 4.5, fill: "white", stroke: BLUE,
        strokeWidth: 2, title: "tip", className: "mark-published" }),
      Plot.text(items, { x: end, y: "key", text: "text", dx: 9, textAnchor: "start", className: "mark-values" }),
      Plot.ruleX([0]),
    ],
  });
  // the whole label on hover (y tick labels are drawn in the domain's order)
  const yLabels = chart.querySelectorAll('g[aria-label="y-axis tick label"] text');
  yLabels.forEach((t, i) => {
    const it = items[i];
    if (!it || t.textContent !== it.label) return;
    const title = document.createElementNS("http://www.w3.org/2000/svg", "title");
    title.textContent = it.head + it.tail;
    t.append(title);
  });
  return labelled(chart, aria);
}

function legend() {
  const p = document.createElement("p");
  p.className = "legend";
  p.innerHTML = '<svg width="34" height="12" aria-hidden="true"><line x1="2" x2="32" y1="6" y2="6" ' +
    'stroke="#0072B2" stroke-width="2.5"/><circle cx="17" cy="6" r="4.5" fill="#0072B2"/></svg> ' +
    "measured by benchdb: the line is its 95 % interval " +
    '<svg width="14" height="12" aria-hidden="true"><circle cx="7" cy="6" r="4.5" fill="white" ' +
    'stroke="#0072B2" stroke-width="2"/></svg> published (summary-only): no samples, so no interval. ' +
    '"48 accel., 6 nodes": a multi-node system; "mixed": accelerators of more than one kind.';
  return p;
}

// A normalisation that divides by a price: a field for each accelerator's price per accelerator-hour and
// each system's per hour (a system's price, where given, is used before its accelerators').
function systemsControls(spec, filters, rows, norm) {
  if (!norm.priced) return;
  const distinct = (key) => [...new Set(rows.map((r) => r[key]).filter((v) => v))].sort();
  const fields = [
    ...distinct("accelerator").map((acc) => [`price:${acc}`, `USD per hour of one ${acc}`]),
    ...distinct("system_name").map((sys) => [`system_price:${sys}`, `USD per hour of the whole ${sys}`]),
  ];
  for (const [name, text] of fields) {
    const l = document.createElement("label");
    l.textContent = text;
    const input = document.createElement("input");
    input.name = name;
    input.type = "number";
    input.step = "any";
    input.min = "0";
    input.value = filters[name] || "";
    formField(spec, l, input);
  }
}

// What tells two rows of one system apart, in the order a label adds them where needed.
const TELL = ["submitter", "backend", "mode", "precision"];

// Each row's label: its system, plus the submitter / backend / mode / precision that differ among the
// rows of that system (only those needed to tell them apart).
function tellApart(rows) {
  const groups = new Map();
  for (const r of rows) groups.set(r.system_name, [...(groups.get(r.system_name) || []), r]);
  for (const group of groups.values()) {
    const parts = group.map(() => []);
    const unique = () => new Set(parts.map((p) => p.join(" · "))).size === group.length;
    for (const f of TELL) {
      if (group.length < 2 || unique()) break;
      const values = group.map((r) => r[f] ?? "?");
      if (new Set(values).size > 1) values.forEach((v, i) => parts[i].push(v));
    }
    group.forEach((r, i) => { r.tail = parts[i].length ? " · " + parts[i].join(" · ") : ""; });
  }
}

// How a system is built, where it is more than one box of one kind: "48 accel., 6 nodes, mixed".
function build(r) {
  const bits = [];
  if (r.nodes > 1) bits.push(`${r.devices ?? "?"} accel., ${r.nodes} nodes`);
  if (r.heterogeneous) bits.push("mixed");
  return bits.join(", ");
}

// A facet per unit, batch size and input shape (a scenario's is in its input shape): figures of two
// batch sizes or scenarios are never drawn on one row.
function facetOf(r) {
  return [r.unit, r.batch_size ?? "", r.input_shape ?? ""].join("\u0000");
}

// The server's rows, ranked best first per facet: each drawn at its normalised figure and interval, or
// listed below the charts with why it has none.
function systemBars(rows, norm) {
  const marks = [], left = [];
  for (const r of rows) {
    if (r.normalised === null || r.normalised === undefined) {
      left.push(`${r.system_name} (${r.mode}, batch ${r.batch_size}): ${r.missing}`);
      continue;
    }
    marks.push({ ...r, shown: r.normalised, unit: r.normalised_unit, lo: r.normalised_ci_low, hi: r.normalised_ci_high });
  }
  const box = document.createElement("div");
  const width = Math.max(640, ($("chart").clientWidth || 1200) - 8);
  const facets = new Map();
  for (const m of marks) facets.set(facetOf(m), [...(facets.get(facetOf(m)) || []), m]);
  for (const mine of facets.values()) {
    const lower = !mine[0].higher_is_better;
    tellApart(mine);
    const unit = mine[0].unit;
    const fmt = FMT.column("value", mine.flatMap((m) => [m.shown, m.lo, m.hi]));
    const items = mine.map((m) => {
      const how = build(m);
      const interval = m.lo !== null && m.hi !== null ? ` [${fmt(m.lo)}, ${fmt(m.hi)}]` : "";
      return {
        key: m.result_id, head: m.system_name, tail: m.tail, x: m.shown, lo: m.lo, hi: m.hi, hollow: m.summary_only,
        text: `${fmt(m.shown)} ${unit}` + (how ? ` · ${how}` : ""),
        tip: `${m.system_name}${m.tail} (${m.devices ?? "?"} × ${m.accelerator ?? "CPU"}${how ? ", " + how : ""}), ` +
          `${m.backend} ${m.mode} ${m.precision}, batch ${m.batch_size}, ${m.input_shape}: ${fmt(m.shown)} ${unit}` +
          (m.summary_only ? `; published${m.submitter ? " by " + m.submitter : ""}: no samples, so no interval`
                          : `; measured by benchdb${interval ? ", 95 % interval" + interval : ""}`),
      };
    });
    const fig = document.createElement("figure");
    const cap = document.createElement("figcaption");
    const where = `batch ${mine[0].batch_size ?? "?"}` + (mine[0].input_shape ? `, ${inputText(mine[0].input_shape)}` : "");
    cap.textContent = `${mine[0].model_id}, ${where}: ${unit}${lower ? " (lower is better)" : ""}, best first, ` +
      `${items.length} result(s)`;
    fig.append(cap, dotChart(items, {
      width, xLabel: `${unit}${lower ? " (lower is better)" : ""}`,
      aria: `systems side by side: ${mine[0].model_id}, ${where}, ${unit}, ${norm.label}`,
    }));
    box.append(fig);
  }
  if (left.length) {
    const p = document.createElement("p");
    p.className = "not-drawn";
    p.textContent = "Not drawn " + norm.label + ": " + left.join("; ");
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
  const norm = normalisationOf(filters.per);
  const headline = rows.filter((r) => r.kind === "headline");
  systemsControls(spec, filters, headline, norm);
  const box = document.createElement("div");
  box.className = "systems";
  const head = document.createElement("p");
  head.className = "normalisation";
  head.textContent = model ? `${model}: each system's headline figure, ${norm.label}` +
    (filters.model ? "" : " (the first model; choose another above)") : "No figures for these filters.";
  box.append(head, legend());
  if (headline.length) box.append(systemBars(headline, norm));
  const serving = rows.filter((r) => r.kind === "serving");
  if (serving.length) box.append(servingFronts(serving));
  return box;
}
