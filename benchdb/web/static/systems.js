// The systems page: every system's headline figure for one model, and serving frontiers.
// Classic script sharing the page's globals (app.js: rec, labelled, COLORS; fmt.js: FMT).
"use strict";

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
