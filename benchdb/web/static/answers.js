// The answer pages: optimal hardware (a picture of every answer's margin above its table) and the home
// page (per model the best system or backend, what got slower, what runs where).
// Classic script sharing the page's globals (app.js: href, load, rec, $, CATALOG; systems.js: dotChart,
// textWidth, fitted; fmt.js: FMT).
"use strict";

// An MLPerf scenario's input shape reads as its scenario ("Offline"), any other as it is.
const inputText = (s) => (s ? String(s).replace(/^scenario=([^,]+),mode=PerformanceOnly$/, "$1") : "");

// A system's build where it is more than one box of one kind.
function buildOf(r) {
  const bits = [];
  if (r.best_nodes > 1) bits.push(`${r.best_accelerators ?? "?"} accel., ${r.best_nodes} nodes`);
  if (r.best_heterogeneous) bits.push("mixed");
  return bits.join(", ");
}

// The best (or runner-up) as words: its system (or hardware), backend, precision, and the submitter of a
// published figure.
function sideText(r, side) {
  const system = r[`${side}_system`] || r[`${side}_hardware`];
  if (!system) return "";
  // a published figure's backend is only the tool that reported it
  const backend = r[`${side}_summary_only`] ? null : r[`${side}_backend`];
  const submitter = r[`${side}_submitter`];
  return [system, backend, side === "best" ? r.best_precision : null, submitter ? `by ${submitter}` : null]
    .filter((x) => x && x !== "unknown").join(" · ");
}

// Why a margin has no interval, in words (the cell is never left empty without a reason).
function noInterval(r) {
  if (!r.runner_up_hardware && !r.runner_up_system) return "only one candidate";
  if (r.best_summary_only || r.runner_up_summary_only) return "published: no samples";
  return "one process, no history: noise unknown";
}

// A margin as a signed percentage on its own (one decimal, as units.percent prints one).
const pctOf = (v) => FMT.scale("pct", [v])(v);

// Every answer's margin over its runner-up, ranked: a dot with its 95 % interval where the noise is
// known; hollow where a side is published (no samples, no interval).
function marginPicture(rows, title) {
  const shown = rows.filter((r) => r.margin !== null && r.margin !== undefined);
  if (!shown.length) return null;
  shown.sort((a, b) => b.margin - a.margin);
  const width = Math.max(640, ($("chart").clientWidth || 1200) - 8);
  const items = shown.map((r) => {
    const where = [r.model_id, `batch ${r.batch_size}`, inputText(r.input_shape)].filter((x) => x).join(" · ");
    const how = buildOf(r);
    const best = fitted(sideText(r, "best"), how ? ` [${how}]` : "", width * 0.22);
    const runner = fitted(sideText(r, "runner_up"), "", width * 0.16);
    const verdict = r.margin_verdict || "only one";
    const interval = r.margin_ci_low !== null ? ` [${pctOf(r.margin_ci_low)}, ${pctOf(r.margin_ci_high)}]` : "";
    return {
      key: `${r.best_result_id}|${r.model_id}|${r.batch_size}|${r.input_shape}`, head: where, tail: "",
      x: r.margin, lo: r.margin_ci_low, hi: r.margin_ci_high,
      hollow: Boolean(r.best_summary_only || r.runner_up_summary_only),
      text: `${pctOf(r.margin)} ${verdict}: ${best} over ${runner}`,
      tip: `${where}: ${sideText(r, "best")} ${FMT.quantity(r.best_value, r.unit)} is ${pctOf(r.margin)} ahead of ` +
        `${sideText(r, "runner_up")} ${FMT.quantity(r.runner_up_value, r.unit)}; ${verdict}` +
        (interval ? `, 95 % interval${interval}` : ` (${noInterval(r)})`),
    };
  });
  const fig = document.createElement("figure");
  const cap = document.createElement("figcaption");
  // a few margins of +1000 % would squash the rest against zero: a symmetric log axis then
  const top = Math.max(...shown.map((r) => r.margin_ci_high ?? r.margin));
  const wide = top > 1;
  const ticks = [0, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100].filter((t) => t <= top * 1.1);
  cap.textContent = title + (shown.length < rows.length ? ` (${shown.length} of ${rows.length} answers have a runner-up)` : "") +
    (wide ? "; the axis is logarithmic above +10 %" : "");
  fig.append(cap, dotChart(items, { width, xLabel: "margin of the best over the runner-up (%)", rule: 0.05,
                                    aria: "margin of each answer", format: pctOf,
                                    ...(wide ? { type: "symlog", constant: 0.1, ticks } : {}) }));
  return fig;
}

// The optimal hardware table: each row's answer first, the best's figure in its unit (in the heading
// where every row shares one), the margin's interval or why it has none, the input that tells two rows
// apart.
function optimalTable(rows, limit) {
  const units = [...new Set(rows.map((r) => r.unit))];
  const one = units.length === 1 ? units[0] : null;
  const t = document.createElement("table");
  t.className = "answers";
  t.setAttribute("aria-label", "best per model, batch size and input");
  const cols = ["model", "batch", "input", "best", one ? `best (${one})` : "best (unit in each cell)", "margin",
                "margin 95 % CI", "verdict", "runner-up"];
  const head = t.createTHead().insertRow();
  for (const c of cols) head.append(Object.assign(document.createElement("th"), { textContent: c, scope: "col" }));
  const body = t.createTBody();
  for (const r of rows.slice(0, limit ?? rows.length)) {
    const tr = body.insertRow();
    const add = (text, cls, title) => {
      const td = tr.insertCell();
      td.textContent = text ?? "";
      if (cls) td.className = cls;
      if (title) td.title = title;
      return td;
    };
    add(r.model_id);
    add(r.batch_size, "num");
    add(inputText(r.input_shape), "", r.input_shape);
    const best = add("", "wrap");
    const a = anchor(href("samples", { result: r.best_result_id }), sideText(r, "best"),
                     "raw samples of this result");
    best.append(a);
    const how = buildOf(r);
    if (how) best.append(Object.assign(document.createElement("span"), { className: "build", textContent: ` (${how})` }));
    const value = one ? FMT.rateScale(rows.map((x) => x.best_value))(r.best_value) : FMT.quantity(r.best_value, r.unit);
    add(value, one ? "num" : "num figure", r.best_summary_only ? "published figure" : "measured by benchdb");
    add(r.margin === null ? "" : pctOf(r.margin), "num");
    if (r.margin_ci_low !== null && r.margin_ci_low !== undefined) {
      add(`[${pctOf(r.margin_ci_low)}, ${pctOf(r.margin_ci_high)}]`, "num");
    } else {
      add(noInterval(r), "why");
    }
    add(r.margin_verdict || "only one", `verdict rating-${r.margin_verdict || "none"}`);
    add(sideText(r, "runner_up") || "none", "wrap");
  }
  return t;
}

function optimalPage(doc) {
  const rows = rec(doc);
  const box = document.createElement("div");
  const per = normalisationOf(rows[0] ? rows[0].per : null);   // a unit says any other normalisation
  const pic = marginPicture(rows, `Every answer's margin over its runner-up (${rows[0] ? rows[0].unit : ""}` +
    `${per === CATALOG.normalisations[0] ? ", " + per.label : ""}), largest first; dashed: the +5 % a win needs`);
  if (pic) box.append(pic);
  return box;
}

function section(title, ...body) {
  const s = document.createElement("section");
  s.append(Object.assign(document.createElement("h2"), { textContent: title }), ...body.filter((b) => b));
  return s;
}

function para(text, cls) {
  return Object.assign(document.createElement("p"), { textContent: text, className: cls || "" });
}

// What got slower: the open change points, newest first; "none" when there is none.
function slower(doc) {
  const open = rec(doc).filter((r) => r.status !== "acked");
  if (!open.length) return para("None: no open change point.", "none");
  const ul = document.createElement("ul");
  const changes = open.map((r) => r.change);
  for (const r of open.slice(0, 10)) {
    const li = document.createElement("li");
    const a = anchor(href("trends", { series: r.series_id }),
                     `${r.model_id} · ${r.backend} · ${r.hardware_name} · batch ${r.batch_size}`, "history of this series");
    li.append(a, ` ${FMT.scale("pct", changes)(r.change)} median latency ` +
      `(${FMT.quantity(r.before_median, "s", [r.after_median])} → ${FMT.quantity(r.after_median, "s", [r.before_median])}), ` +
      `${FMT.timestamp(r.run_started_at)}`);
    ul.append(li);
  }
  if (open.length > 10) ul.append(Object.assign(document.createElement("li"), { textContent: `and ${open.length - 10} more` }));
  return ul;
}

// What runs where: per family and hardware, how many backends ran it ok, linked to the matrix.
function coverage(doc) {
  const rows = rec(doc);
  if (!rows.length) return para("Nothing measured yet.", "none");
  const hardware = [...new Set(rows.map((r) => r.hardware_name))].sort();
  const families = [...new Set(rows.map((r) => r.family))].sort();
  const t = document.createElement("table");
  t.setAttribute("aria-label", "what runs where");
  const head = t.createTHead().insertRow();
  head.append(Object.assign(document.createElement("th"), { textContent: "family", scope: "col" }));
  for (const hw of hardware) head.append(Object.assign(document.createElement("th"), { textContent: hw, scope: "col" }));
  const body = t.createTBody();
  for (const fam of families) {
    const tr = body.insertRow();
    tr.append(Object.assign(document.createElement("th"), { textContent: fam ?? "(none)", scope: "row" }));
    for (const hw of hardware) {
      const mine = rows.filter((r) => r.family === fam && r.hardware_name === hw);
      const td = tr.insertCell();
      td.className = "num";
      if (!mine.length) continue;
      const ok = mine.filter((r) => r.ok > 0).length;
      const a = anchor(href("matrix", fam ? { family: fam } : {}), `${ok} of ${mine.length} backend(s)`,
                       `${fam} on ${hw}: ${mine.map((r) => `${r.backend} ${r.rating_label}`).join(", ")}`);
      td.append(a);
    }
  }
  return t;
}

async function homePage() {
  const [best, changes, matrix] = await Promise.all([
    load("optimal", {}, CATALOG), load("change_points", {}, CATALOG), load("matrix", {}, CATALOG),
  ]);
  const rows = rec(best);
  const box = document.createElement("div");
  box.className = "home";
  const link = (view, text) => anchor(href(view, {}), text);
  const ways = Object.entries(CATALOG.views.find((v) => v.name === "optimal").choice_labels.per)
    .filter(([name]) => name !== CATALOG.normalisations[0].name).map(([, label]) => label);
  const more = document.createElement("p");
  more.append(link("optimal", `Every answer, ${ways.join(" or ")}`), " · ", link("systems", "systems side by side"),
              " · ", link("runs", "the runs"));
  box.append(
    section("The best per model", rows.length ? marginPicture(rows, "Margin of the best over the runner-up " +
      "per model, batch size and input (dashed: the +5 % a win needs)") : null,
            rows.length ? optimalTable(rows, 50) : para("Nothing measured yet: run `benchdb quickstart`.", "none"),
            rows.length > 50 ? para(`The first 50 of ${rows.length} answers; all on Optimal hardware.`) : null, more),
    section("What got slower recently", slower(changes)),
    section("What runs where", coverage(matrix), link("matrix", "The compatibility matrix")),
  );
  return { box, rows: rows.length };
}
