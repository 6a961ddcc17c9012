// puff serve's page: plain JavaScript, no libraries, plots as inline SVG.
"use strict";
const $ = (s) => document.querySelector(s);
let token = sessionStorage.getItem("puff-token") || "";
let current = "";
let datasets = [];

async function api(method, path, body) {
  const opt = { method, headers: { Authorization: "Bearer " + token } };
  if (body !== undefined) {
    opt.body = JSON.stringify(body);
    opt.headers["Content-Type"] = "application/json";
    // one key per click: a network retry of this request can never draw fresh noise
    opt.headers["Idempotency-Key"] = crypto.randomUUID ? crypto.randomUUID() : String(Date.now()) + Math.random();
  }
  const r = await fetch(path, opt);
  let j = {};
  try { j = await r.json(); } catch (e) { j = { error: "not JSON" }; }
  return { status: r.status, body: j };
}

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  for (const k of kids) e.append(k);
  return e;
}

const NS = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

// niceStep is the round step — 1, 2 or 5 × 10^k — that cuts span into
// about n parts ("nice numbers" for axis ticks).
function niceStep(span, n) {
  const raw = span / n, p = Math.pow(10, Math.floor(Math.log10(raw))), m = raw / p;
  return (m < 1.5 ? 1 : m < 3 ? 2 : m < 7 ? 5 : 10) * p;
}

// tickValue is v rounded to the decimals of the step (no 0.30000000000000004).
function tickValue(v, step) {
  const d = Math.min(20, Math.max(0, -Math.floor(Math.log10(step)) + 1));
  return Number(v.toFixed(d)) + 0; // + 0: no "-0"
}

// linearTicks covers [a, b] with round ticks; integer axes step by ≥ 1.
function linearTicks(a, b, n, integer) {
  if (b <= a) b = a + 1;
  let st = niceStep(b - a, n);
  if (integer) st = Math.max(1, Math.round(st));
  const lo = Math.floor(a / st + 1e-9) * st, hi = Math.ceil(b / st - 1e-9) * st, ticks = [];
  for (let i = 0; i <= Math.round((hi - lo) / st); i++) ticks.push(tickValue(lo + i * st, st));
  return { lo, hi, ticks };
}

// logTicks covers [a, b] (a, b > 0) with powers of ten (1, 2, 5 × 10^k
// within two decades); lo and hi are log10 of the axis ends.
function logTicks(a, b) {
  let e0 = Math.floor(Math.log10(a) + 1e-9), e1 = Math.ceil(Math.log10(b) - 1e-9);
  if (e1 <= e0) e1 = e0 + 1;
  const mult = e1 - e0 <= 2 ? [1, 2, 5] : [1], every = Math.ceil((e1 - e0 + 1) / 7), ticks = [];
  for (let e = e0; e <= e1; e++) {
    if ((e - e0) % every) continue;
    for (const m of mult) if (e < e1 || m === 1) ticks.push(parseFloat(m + "e" + e));
  }
  return { lo: e0, hi: e1, ticks };
}

// fmt writes a tick: plain digits from 10^-3 to below 10^4, else "1e4", "2.5e-4".
function fmt(v) {
  if (!isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e4 || a < 1e-3)) return v.toExponential().replace("e+", "e");
  return String(v);
}

// Time axes run over wall-clock milliseconds (the date and time as
// written in the stream's zone, read as if UTC), so a tick at 06:00 is
// 06:00 on the zone's clock.
const SEC = 1000, MIN = 60 * SEC, HOUR = 60 * MIN, DAY = 24 * HOUR;
const TIME_STEPS = [SEC, 2 * SEC, 5 * SEC, 10 * SEC, 15 * SEC, 30 * SEC, MIN, 2 * MIN, 5 * MIN, 10 * MIN, 15 * MIN, 30 * MIN,
  HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY, 2 * DAY, 7 * DAY, 14 * DAY];

// wallClock is an RFC 3339 time's date and time of day as written (its
// zone's clock) in milliseconds: "2026-11-25T07:00:00+01:00" → 07:00.
function wallClock(t) {
  return Date.parse(String(t).slice(0, 19) + "Z");
}

// timeTicks covers [a, b] (wall-clock ms) with round times: the step is
// the first of 1 s … 30 min, 1, 2, 3, 6, 12 h, 1, 2 days, 1, 2 weeks (from
// Mondays) that cuts the span into at most n parts, or whole days by
// 1, 2, 5 × 10^k. Ticks within a day read "HH:MM" ("HH:MM:SS" under a
// minute) and "MM-DD" at midnight; ticks of a day or more "MM-DD", with
// the year when the axis crosses one.
function timeTicks(a, b, n) {
  if (b <= a) b = a + HOUR;
  let st = TIME_STEPS.find((x) => (b - a) / x <= n);
  if (!st) st = niceStep((b - a) / DAY, n) * DAY;
  const off = st === 7 * DAY || st === 14 * DAY ? 4 * DAY : 0; // 1970-01-05 was a Monday
  const lo = Math.floor((a - off) / st) * st + off, hi = Math.ceil((b - off) / st) * st + off, ticks = [];
  for (let v = lo; v <= hi; v += st) ticks.push(v);
  const iso = (v) => new Date(v).toISOString();
  const years = iso(lo).slice(0, 4) !== iso(hi).slice(0, 4);
  const labels = ticks.map((v) => {
    const d = iso(v);
    if (st < DAY && v % DAY !== 0) return st < MIN ? d.slice(11, 19) : d.slice(11, 16);
    return years ? d.slice(0, 10) : d.slice(5, 10);
  });
  return { lo, hi, ticks, labels };
}

const CHAR = 6.6; // px per character of the 11px tick font (an estimate for the layout)
const XT = 18; // x tick labels' baseline below the axis: clear of the lowest y tick's label
const XR = 40; // the widest right margin: half a "YYYY-MM-DD" label and 4 px
const GAP = 8; // px at least between two x tick labels

// labelsFit reports whether the x labels of axis t (ticks, labels, lo,
// hi; a label "" is not drawn) drawn width px wide keep GAP px between
// neighbours, each label CHAR px a character centred on its tick.
function labelsFit(t, width) {
  const X = (v) => (v - t.lo) / (t.hi - t.lo) * width;
  let prev = -1;
  for (let i = 0; i < t.ticks.length; i++) {
    if (t.labels[i] === "") continue;
    if (prev >= 0 && X(t.ticks[i]) - X(t.ticks[prev]) < (t.labels[i].length + t.labels[prev].length) * CHAR / 2 + GAP) return false;
    prev = i;
  }
  return true;
}

// xTicks is the x axis of lines over [a, b] drawn width px wide (opt.xtime:
// wall-clock ms, timeTicks; else linearTicks, opt.xint for whole numbers):
// the round ticks with the most parts, at most 5, whose labels fit
// (labelsFit) — so labels never overlap however many points (679 windows
// of a day put 9 dates on 400 px before) — and, when no step fits, every
// k-th label only (the others "").
function xTicks(a, b, width, opt) {
  let t;
  for (let n = 5; n >= 1; n--) {
    t = opt.xtime ? timeTicks(a, b, n) : linearTicks(a, b, n, opt.xint);
    t.labels = t.labels || t.ticks.map(fmt);
    if (labelsFit(t, width)) return t;
  }
  for (let k = 2; k < t.ticks.length; k++) {
    const thin = Object.assign({}, t, { labels: t.labels.map((l, i) => (i % k ? "" : l)) });
    if (labelsFit(thin, width)) return thin;
  }
  return Object.assign({}, t, { labels: t.labels.map((l, i) => (i ? "" : l)) });
}

// plot draws lines [{name, points: [[x, y]...], color}] or categorical
// bars [{bars: true, points: [[label, y]...], color}] with round ticks,
// axis titles clear of the tick labels and a legend with colour keys.
// opt.xtime: x is wall-clock ms (see timeTicks); opt.markers: a dot with
// a tooltip at every point.
function plot(series, opt) {
  const W = 480;
  const pts = series.flatMap((q) => q.points);
  if (pts.length === 0) return svg("svg", { width: W, height: 260, viewBox: `0 0 ${W} 260`, role: "img", class: "chart" });
  const bars = series.find((q) => q.bars);
  // bars may carry marks (a released value drawn over each bar): in range too
  const ys = pts.map((p) => p[1]).concat(bars && bars.marks ? bars.marks.filter((m) => m !== null) : []);
  const ty = opt.logy ? logTicks(Math.max(1e-300, Math.min(...ys)), Math.max(...ys))
    : linearTicks(Math.min(0, ...ys), Math.max(...ys, opt.ymax || 0), 4, false);
  const tyLabels = ty.ticks.map(fmt);
  const L = 24 + Math.max(...tyLabels.map((t) => t.length)) * CHAR + 6;
  // x ticks of lines, labels apart at the plot's width (a right margin of
  // at most XR); the right margin holds half the last one's label
  let tx = null, txLabels = [];
  if (!bars) {
    let x0 = Infinity, x1 = -Infinity; // no spread: thousands of points
    for (const p of pts) { x0 = Math.min(x0, p[0]); x1 = Math.max(x1, p[0]); }
    tx = xTicks(x0, x1, W - L - XR, opt);
    txLabels = tx.labels;
  }
  const R = Math.max(12, (txLabels.length ? txLabels[txLabels.length - 1].length * CHAR / 2 : 0) + 4);
  // legend: colour keys and names in rows above the plot, wrapped at its width
  const named = series.filter((q) => q.name), legend = [];
  let lx = 0, rows = named.length ? 1 : 0;
  for (const q of named) {
    const w = 22 + q.name.length * CHAR;
    if (lx > 0 && L + lx + w > W - R) { lx = 0; rows++; }
    legend.push({ q, x: lx, row: rows - 1 });
    lx += w + 14;
  }
  const T = rows ? 12 + 18 * rows : 12, H = 260 + 18 * Math.max(0, rows - 1);
  const s = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", class: "chart" });
  // categorical labels: horizontal when they fit their band, else vertical
  let B = 40, vertical = false, band = 0, every = 1;
  if (bars) {
    const cats = bars.points.map((p) => String(p[0]));
    band = (W - L - R) / cats.length;
    const longest = Math.max(...cats.map((c) => c.length)) * CHAR;
    vertical = longest > band - 4;
    if (vertical) { B = 30 + Math.min(longest, 90); every = Math.ceil(13 / band); }
  }
  const y0 = ty.lo, y1 = ty.hi;
  const Y = (y) => T + (1 - ((opt.logy ? Math.log10(y) : y) - y0) / (y1 - y0)) * (H - T - B);
  const g = (cls) => { const e = svg("g", { class: cls }); s.append(e); return e; };
  const text = (parent, x, y, t, a, extra) => {
    const e = svg("text", Object.assign({ x, y, "text-anchor": a || "middle" }, extra || {}));
    e.textContent = t;
    parent.append(e);
    return e;
  };
  // grid and y ticks
  const grid = g("grid"), gy = g("y-ticks");
  ty.ticks.forEach((v, i) => {
    const y = Y(v);
    grid.append(svg("line", { x1: L, y1: y, x2: W - R, y2: y, stroke: "#eee" }));
    text(gy, L - 6, y + 4, tyLabels[i], "end");
  });
  s.append(svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#999" }));
  s.append(svg("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#999" }));
  text(g("y-title"), 0, 0, opt.ylabel || "", "middle", { transform: `translate(12 ${(T + H - B) / 2}) rotate(-90)` });
  text(g("x-title"), (L + W - R) / 2, H - 6, opt.xlabel || "");
  const gx = g("x-ticks");
  if (bars) {
    const base = Y(Math.max(0, y0));
    bars.points.forEach(([c, y], i) => {
      const top = Y(Math.max(y, y0));
      const r = svg("rect", { x: L + (i + 0.1) * band, y: Math.min(top, base), width: band * 0.8, height: Math.abs(base - top) || 1, fill: bars.color, class: "bar", "data-state": c });
      const tip = svg("title");
      tip.textContent = `${c}: ${Number(y.toPrecision(6))}`;
      r.append(tip);
      s.append(r);
      const m = bars.marks ? bars.marks[i] : null;
      if (m !== null && m !== undefined) {
        // the raw released value: a line across the bar
        const my = Y(Math.max(m, y0));
        const mk = svg("line", { x1: L + (i + 0.05) * band, y1: my, x2: L + (i + 0.95) * band, y2: my, stroke: bars.markColor, "stroke-width": 3, class: "mark", "data-state": c });
        const mt = svg("title");
        mt.textContent = `${c}: released ${Number(m.toPrecision(6))}`;
        mk.append(mt);
        s.append(mk);
      }
      if (i % every) return;
      const cx = L + (i + 0.5) * band;
      if (vertical) text(gx, 0, 0, String(c), "end", { transform: `translate(${cx + 4} ${H - B + 8}) rotate(-90)` });
      else text(gx, cx, H - B + XT, String(c));
    });
  } else {
    const X = (x) => L + (x - tx.lo) / (tx.hi - tx.lo) * (W - L - R);
    tx.ticks.forEach((v, i) => { if (txLabels[i] !== "") text(gx, X(v), H - B + XT, txLabels[i]); });
    for (const q of series) {
      const d = q.points.map((p, i) => (i ? "L" : "M") + X(p[0]).toFixed(1) + " " + Y(p[1]).toFixed(1)).join(" ");
      s.append(svg("path", { d, fill: "none", stroke: q.color, "stroke-width": q.width || 2, "stroke-dasharray": q.dash || "" }));
    }
    if (opt.markers) {
      const gp = g("points");
      for (const q of series) for (const p of q.points) {
        const c = svg("circle", { cx: X(p[0]).toFixed(1), cy: Y(p[1]).toFixed(1), r: 2.5, fill: q.color, class: "point", "data-name": q.name || "" });
        const tip = svg("title");
        tip.textContent = `${q.name ? q.name + ", " : ""}${p[2] || fmt(p[0])}: ${Number(p[1].toPrecision(6))}`;
        c.append(tip);
        gp.append(c);
      }
    }
  }
  // legend: a colour key before each name, in rows above the plot
  const gl = g("legend");
  for (const { q, x, row } of legend) {
    const item = svg("g", { class: "legend-item", "data-name": q.name }), y = 12 + 18 * row;
    item.append(svg("line", { x1: L + x, y1: y, x2: L + x + 18, y2: y, stroke: q.color, "stroke-width": 3, "stroke-dasharray": q.dash || "", class: "legend-key" }));
    text(item, L + x + 22, y + 4, q.name, "start");
    gl.append(item);
  }
  return s;
}

async function login(e) {
  if (e) e.preventDefault();
  token = $("#token").value.trim() || token;
  sessionStorage.setItem("puff-token", token);
  const who = await api("GET", "/v1/token");
  if (who.status !== 200) { $("#who").textContent = who.body.error || "sign-in failed"; $("#who").className = "error"; return; }
  $("#who").textContent = "signed in: token " + who.body.id + " (" + who.body.scopes.join(", ") + ")";
  $("#who").className = "ok";
  $("#register-form").hidden = !who.body.scopes.includes("admin");
  await loadDatasets();
}

async function register(e) {
  e.preventDefault();
  const data = $("#reg-data").value.trim(), msg = $("#message");
  const body = { name: $("#reg-name").value.trim(), class: "fit", states: $("#reg-states").value.trim(), budget: Number($("#reg-budget").value) };
  if (data.startsWith("builtin:")) body.builtin = data.slice(8); else body.data = data;
  const r = await api("POST", "/v1/datasets", body);
  if (r.status !== 201) { $("#who").textContent = `registration failed (${r.status}): ${r.body.error}`; $("#who").className = "error"; return; }
  current = body.name;
  await loadDatasets();
  await select(body.name);
}

async function loadDatasets() {
  const r = await api("GET", "/v1/datasets");
  if (r.status !== 200) return;
  datasets = r.body.datasets;
  const box = $("#datasets");
  box.replaceChildren();
  if (datasets.length === 0) box.append(el("p", { class: "muted" }, "No dataset this token may read."));
  const sel = $("#dataset");
  sel.replaceChildren();
  for (const d of datasets) {
    if (d.error) { // unreadable: listed with its error, not selectable
      box.append(el("div", { class: "ds error", "data-name": d.name }, el("strong", {}, d.name), " — ", d.error));
      continue;
    }
    const L = d.ledger, frac = Math.min(1, L.spent / L.budget);
    const fill = el("div", { class: "spent" + (frac >= 1 ? " full" : "") });
    fill.style.width = (100 * frac).toFixed(2) + "%"; // CSSOM: allowed by the page's CSP
    const bar = el("div", { class: "budget-bar", title: `spent ${L.spent} of ${L.budget}` }, fill);
    const cls = (d.class ? `${d.class.states.length} states, ${d.class.chains} chain(s), ${d.class.coverage}${d.class.fitted ? ", fitted" : ""}` : "no class yet (its first release sets it)") +
      (d.data_error ? "; cannot be released: " + d.data_error : "");
    const size = d.sizes ? `${d.sizes.series} series, ${d.sizes.readings} readings (longest ${d.sizes.max_length})` : "";
    const card = el("div", { class: "ds" + (d.name === current ? " selected" : ""), "data-name": d.name },
      el("strong", {}, d.name), " — ε spent ", el("span", { class: "spent-text" }, String(L.spent)), ` of ${L.budget}, remaining ${L.remaining} (${L.rule}, ${L.releases} releases)`, bar,
      el("div", { class: "muted" }, cls + (size ? "; " + size : "")));
    card.addEventListener("click", () => select(d.name));
    box.append(card);
    sel.append(el("option", { value: d.name }, d.name));
  }
  datasets = datasets.filter((d) => !d.error);
  if (datasets.length && !datasets.some((d) => d.name === current)) await select(datasets[0].name);
  else if (current) sel.value = current;
}

// panelFor is the dataset the Release panel's result and message are
// about: another dataset's histogram and "Released #n" never stay shown.
let panelFor = "";
function resetRelease(name) {
  if (panelFor === name) return;
  panelFor = name;
  $("#result").replaceChildren();
  $("#message").textContent = "";
  $("#message").className = "";
}

// releaseAllowed enables the Release form only for a dataset this token
// may release on (the server's "may") and whose data can be read, and
// says why not otherwise.
function releaseAllowed(name) {
  const d = datasets.find((x) => x.name === name) || {};
  const may = d.may || [];
  const why = d.data_error ? `${name} cannot be released: ${d.data_error}.`
    : !may.includes("release") ? `This token may read ${name} but not release on it (that needs the scope release:${name}).` : "";
  $("#release-fields").disabled = why !== "";
  $("#release-note").textContent = why;
}

async function select(name) {
  resetRelease(name);
  current = name;
  releaseAllowed(name);
  $("#dataset").value = name;
  $("#work").hidden = false;
  for (const c of document.querySelectorAll(".ds")) c.classList.toggle("selected", c.dataset.name === name);
  await Promise.all([planner(), ledger(), streamChart()]);
}

async function planner() {
  const name = current, box = $("#planner");
  box.replaceChildren(el("p", { class: "muted" }, "computing σ…"));
  const eps = [0.1, 0.25, 0.5, 1, 2, 3, 5];
  const methods = [["exact", "#2b6cb0"], ["approx", "#38a169"], ["groupdp", "#dd6b20"], ["dp", "#a0aec0"]];
  const sig = [], err = [], used = [];
  for (const [m, color] of methods) {
    const pts = [], e1 = [];
    for (const e of eps) {
      const r = await api("GET", `/v1/scale?dataset=${encodeURIComponent(name)}&epsilon=${e}&method=${m}`);
      if (r.status === 200 && r.body.applicable && r.body.sigma !== null) {
        pts.push([e, r.body.sigma]); e1.push([e, r.body.expected_l1_error]);
        if (m === "exact") used.push(r.body);
      }
    }
    if (pts.length) { sig.push({ name: m, points: pts, color }); err.push({ name: m, points: e1, color }); }
  }
  if (name !== current) return;
  const ps = plot(sig, { logy: true, xlabel: "ε", ylabel: "σ used (log scale)" }), pl = plot(err, { logy: true, xlabel: "ε", ylabel: "expected L1 error (log scale)" });
  ps.id = "planner-sigma";
  pl.id = "planner-l1";
  box.replaceChildren(ps, pl, plannerTable(used));
}

// plannerTable shows, for method exact at each ε, the scale a release
// draws its noise with (the smaller of the two valid bounds) and which
// bound gave it: the Markov Quilt Mechanism's σ or the temporal leakage
// bound's (pairwise certificate or scalar recursion).
function plannerTable(rows) {
  const num = (x) => (typeof x === "number" ? String(Number(x.toPrecision(4))) : "not computed");
  const by = (r) => r.used === "tpl" ? `temporal leakage bound (${r.leakage_bound === "pairwise" ? "pairwise certificate" : "scalar recursion"})`
    : r.used === "mqm" ? "Markov Quilt Mechanism" : r.used;
  const head = el("tr", {}, ...["ε", "σ used", "per-bin scale", "set by", "MQM σ", "leakage σ"].map((h) => el("th", {}, h)));
  const body = rows.map((r) => {
    const tr = el("tr", {}, ...[String(r.epsilon), num(r.sigma), num(r.per_bin_scale), by(r), num(r.mqm_sigma), num(r.leakage_sigma)].map((v) => el("td", {}, v)));
    tr.dataset.used = r.used;
    if (r.calibration && r.calibration.why) tr.title = r.calibration.why;
    return tr;
  });
  return el("div", { id: "planner-used" },
    el("p", { class: "muted" }, "Method exact: a release draws its noise with the smaller of two valid scales, the Markov Quilt Mechanism's σ and the temporal leakage bound's. The plots show the scale used."),
    el("table", { id: "planner-table" }, el("thead", {}, head), el("tbody", {}, ...body)));
}

async function ledger() {
  const r = await api("GET", `/v1/datasets/${encodeURIComponent(current)}/ledger`);
  if (r.status !== 200) return;
  const tb = $("#ledger-table tbody");
  tb.replaceChildren();
  // the total after each release as the ledger priced it, and the sum of
  // the releases' own ε: a total below the sum (a tighter rule pricing
  // them together) is drawn against it, so a drop never looks like a refund
  const pts = [[0, 0]], sums = [[0, 0]];
  let sum = 0, repriced = false;
  r.body.releases.forEach((e, i) => {
    const prev = pts[pts.length - 1][1];
    const row = el("tr", {}, ...[e.id, e.time.slice(0, 19).replace("T", " "), e.token || "cli", e.mechanism, e.epsilon, e.query, e.spent, e.rule].map((v) => el("td", {}, String(v))));
    if (Number(e.spent) < prev) {
      row.className = "repriced";
      row.title = `the ${e.rule} rule priced all ${i + 1} releases together at ${e.spent}, below the total before (${prev}): not a refund`;
    }
    tb.append(row);
    sum += e.epsilon;
    pts.push([i + 1, Number(e.spent)]);
    sums.push([i + 1, Number(sum.toPrecision(12))]);
    repriced = repriced || Math.abs(sum - Number(e.spent)) > 1e-9 * Math.max(1, sum);
  });
  const B = Number(r.body.budget);
  const lines = [{ name: "cumulative ε", points: pts, color: "#2b6cb0" }];
  if (repriced) lines.push({ name: "sum of the releases' ε", points: sums, color: "#718096", dash: "2 3", width: 1.5 });
  lines.push({ name: "budget", points: [[0, B], [Math.max(1, pts.length - 1), B]], color: "#c53030", dash: "4 3" });
  $("#ledger-plot").replaceChildren(plot(lines, { xlabel: "release", ylabel: "ε", ymax: B, xint: true }));
  $("#ledger-pricing").textContent = r.body.pricing ? r.body.pricing.charAt(0).toUpperCase() + r.body.pricing.slice(1) + "." : "";
}

// Colours of a stream's states (Okabe–Ito, then dashed again).
const STATE_COLORS = ["#0072b2", "#e69f00", "#009e73", "#d55e00", "#cc79a7", "#56b4e9", "#999933", "#000000"];

// streamChart draws the released windows of the dataset's stream: one
// line per state of the noisy (released) values over the windows' starts,
// and the stream's settings. Only what the server released is shown: the
// windows endpoint serves released windows, never the open one.
async function streamChart() {
  const name = current, box = $("#stream");
  const r = await api("GET", `/v1/streams/${encodeURIComponent(name)}/windows`);
  if (name !== current) return;
  if (r.status !== 200) {
    box.replaceChildren(el("p", { class: "muted", id: "no-stream" }, r.status === 404 ? "No stream on this dataset (puff stream init declares one)." : "")); // 403 etc.: nothing
    return;
  }
  const st = r.body.stream, wins = r.body.windows;
  // a running stream (docs/math.md §4.12) draws each total since the first
  // window at the end of the window that closed it
  const values = (w) => (st.running && w.running ? w.running.total : w.histogram) || [];
  const at = (w) => (st.running ? w.end : w.start);
  const states = [], byState = new Map();
  // each total's or window's estimate (its noisy values projected,
  // docs/math.md §4.14); a window stored before estimates were released:
  // its values
  for (const w of wins) for (const b of values(w)) {
    const v = typeof b.estimate === "number" ? b.estimate : b.value;
    if (typeof v !== "number" || !isFinite(v)) continue;
    if (!byState.has(b.state)) { byState.set(b.state, []); states.push(b.state); }
    byState.get(b.state).push([wallClock(at(w)), v, at(w)]);
  }
  const series = states.map((s, i) => ({ name: String(s), points: byState.get(s), color: STATE_COLORS[i % STATE_COLORS.length], dash: i < STATE_COLORS.length ? "" : "5 3" }));
  const sig = (x) => (typeof x === "number" ? String(Number(x.toPrecision(4))) : String(x));
  const cal = st.calibration || {};
  const item = (field, label, value, more) => el("li", { "data-field": field }, el("strong", {}, label + " "), el("span", { class: "value" }, value), more ? el("span", { class: "muted" }, " — " + more) : "");
  const info = el("ul", { id: "stream-info" },
    item("epsilon", "ε", sig(st.epsilon), "the whole stream, every window it releases, costs ε once"),
    item("window", "window", st.window, "in " + st.time_zone + " time"),
    item("method", "method", `${st.method}, query ${st.query}` + (st.running ? ", running totals (binary tree)" : "")),
    item("sigma", "σ", sig(st.sigma), `Markov Quilt Mechanism, series up to ${st.sigma_length} readings` + (cal.tpl_sigma ? `; temporal leakage bound ${sig(cal.tpl_sigma)}` : "")),
    item("calibration", "calibration", cal.method || "—", cal.why || ""),
    item("windows", "windows released", String(wins.length), wins.length && wins[0].per_bin_scale !== undefined ? `per-bin noise scale ${sig(wins[0].per_bin_scale)}` : ""));
  const left = el("div", {});
  if (wins.length) {
    const first = wins[0].start.slice(0, 10);
    left.append(plot(series, { xtime: true, markers: wins.length <= 150, xlabel: st.running ? `window end (${st.time_zone} time; totals since ${first})` : `window start (${st.time_zone} time, from ${first})`, ylabel: st.running ? `cumulative ${st.query}, estimate` : `${st.query}, estimate` }));
    left.lastChild.id = "stream-chart";
  } else left.append(el("p", { class: "muted" }, "No window released yet."));
  box.replaceChildren(left, el("div", {}, info, el("p", { class: "muted", id: "stream-note" }, (st.running ? "Each point is the estimate of a total since the first window" : "Each point is a window's estimate") + ": its released noisy values, which can be negative since the noise is symmetric, moved to the closest histogram with no negative bin and the public number of readings (no privacy cost); the raw values are in the windows' JSON. The open window's readings are never shown.")));
}

// epsilonValue is ε as typed: a number when it is one, else the text
// ("ln(2)", "1/2"), which the server reads as every puff --epsilon does.
function epsilonValue(v) {
  v = v.trim();
  return v !== "" && isFinite(Number(v)) ? Number(v) : v;
}

// estimateNote says why a released value can be negative and what the bars
// are (docs/math.md §4.14): the words the page owes a reader of the chart.
function estimateNote(win) {
  const total = win.query === "relative" ? "1" : `the ${win.observations} readings`;
  const numeric = win.histogram.length && win.histogram[0].range;
  return "Red lines: the released noisy values. Each carries Laplace noise of scale " + Number(win.per_bin_scale.toPrecision(4)) +
    ", symmetric around the true value, so a bin with few readings can come out negative and the bins need not add up; the raw values are unbiased. " +
    "Bars: the estimate, the closest histogram with no negative bin " + (numeric ? "summing to at most " + total + " (a reading's value may be missing)" : "summing to " + total) +
    ", computed from the released values and the public number of readings only, so it costs no privacy.";
}

async function release(e) {
  e.preventDefault();
  const msg = $("#message");
  msg.textContent = "releasing…"; msg.className = "";
  const body = { method: $("#method").value, epsilon: epsilonValue($("#epsilon").value), query: $("#query").value };
  if ($("#window").value.trim()) body.window = $("#window").value.trim();
  if ($("#profile").value) body.profile = $("#profile").value;
  const r = await api("POST", `/v1/datasets/${encodeURIComponent(current)}/releases`, body);
  if (r.status !== 201) {
    msg.textContent = (r.status === 409 ? "Refused: " : `Error ${r.status}: `) + r.body.error;
    msg.className = "error";
    await loadDatasets();
    return;
  }
  const rep = r.body;
  msg.textContent = `Released #${rep.id}: ε spent ${rep.ledger.spent} of ${rep.ledger.budget} (${rep.ledger.rule}).` +
    (rep.ledger.pricing && rep.ledger.pricing.includes("lower than the sum") ? " " + rep.ledger.pricing.charAt(0).toUpperCase() + rep.ledger.pricing.slice(1) + "." : "");
  msg.className = "ok";
  const out = $("#result");
  out.replaceChildren();
  const win = rep.windows ? rep.windows[0] : rep, hist = rep.profile ? null : win.histogram;
  if (rep.profile) {
    // a profile: every cell's mean, or every cell's histogram as one line
    // per state over the cells; the estimates where the release has them
    // (docs/math.md §4.14), the noisy values otherwise
    const cells = rep.profile, q = cells[0].query;
    const est = (v, e) => (typeof e === "number" ? e : v);
    const series = cells[0].mean !== undefined && cells[0].mean !== null
      ? [{ bars: true, points: cells.map((c) => [c.cell, est(c.mean, c.mean_estimate)]), color: "#2b6cb0" }]
      : cells[0].histogram.map((b, i) => ({ name: b.state, points: cells.map((c, j) => [j, est(c.histogram[i].value, c.histogram[i].estimate)]), color: STATE_COLORS[i % STATE_COLORS.length], dash: i < STATE_COLORS.length ? "" : "5 3" }));
    out.append(plot(series, { xlabel: `cell (${rep.profile_kind}, ${rep.time_zone} time${series[0].bars ? "" : ", 0 = " + cells[0].cell})`, ylabel: "estimated " + q }));
    out.lastChild.id = "histogram";
    out.append(el("p", { id: "estimate-note", class: "muted" }, "Each cell's released noisy values carry Laplace noise of scale " + Number(cells[0].per_bin_scale.toPrecision(4)) +
      ", so a raw value can be negative; drawn is the estimate: a cell's counts projected onto the closest histogram with no negative bin and the cell's public number of readings, a mean clamped to the range of the levels — computed from the released values and public sizes only, so it costs no privacy."));
  } else if (hist) {
    const first = rep.windows ? ` (window ${rep.windows[0].start}, first of ${rep.windows.length})` : "";
    const est = hist.every((b) => typeof b.estimate === "number");
    const bars = est ? { name: "estimate", bars: true, points: hist.map((b) => [b.state, b.estimate]), color: "#2b6cb0", marks: hist.map((b) => b.value), markColor: "#c53030" }
      : { bars: true, points: hist.map((b) => [b.state, b.value]), color: "#2b6cb0" };
    const series = est ? [bars, { name: "released noisy value", points: [], color: "#c53030" }] : [bars];
    out.append(plot(series, { xlabel: "state" + first, ylabel: (est ? "" : "private ") + win.query }));
    out.lastChild.id = "histogram";
    if (est) out.append(el("p", { id: "estimate-note", class: "muted" }, estimateNote(win)));
  }
  const audit = rep.profile ? { profile: rep.profile_kind, cells: rep.profile.length, time_zone: rep.time_zone, per_bin_scale: rep.profile[0].per_bin_scale, guarantee: rep.profile[0].guarantee, total: rep.total, warnings: rep.profile[0].warnings }
    : rep.windows ? { windows: rep.windows.length, total: rep.total } : { method: rep.method, epsilon: rep.epsilon, mean: rep.mean, mean_estimate: rep.mean_estimate, sigma: rep.sigma, lipschitz: rep.lipschitz, per_bin_scale: rep.per_bin_scale, noise_scale: rep.noise_scale, guarantee: rep.guarantee, protects: rep.protects, sequences: rep.sequences, observations: rep.observations, warnings: rep.warnings };
  out.append(el("pre", { id: "audit" }, JSON.stringify(audit, null, 2)));
  await loadDatasets();
  await ledger();
}

document.addEventListener("DOMContentLoaded", () => {
  $("#login-form").addEventListener("submit", login);
  $("#register-form").addEventListener("submit", register);
  $("#release-form").addEventListener("submit", release);
  $("#dataset").addEventListener("change", (e) => select(e.target.value));
  if (token) login();
});
