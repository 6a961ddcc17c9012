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

const CHAR = 6.6; // px per character of the 11px tick font (an estimate for the layout)

// plot draws lines [{name, points: [[x, y]...], color}] or categorical
// bars [{bars: true, points: [[label, y]...], color}] with round ticks,
// axis titles clear of the tick labels and a legend with colour keys.
function plot(series, opt) {
  const W = 480, H = 260, R = 12;
  const s = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", class: "chart" });
  const pts = series.flatMap((q) => q.points);
  if (pts.length === 0) return s;
  const bars = series.find((q) => q.bars);
  const ys = pts.map((p) => p[1]);
  const ty = opt.logy ? logTicks(Math.max(1e-300, Math.min(...ys)), Math.max(...ys))
    : linearTicks(Math.min(0, ...ys), Math.max(...ys, opt.ymax || 0), 4, false);
  const tyLabels = ty.ticks.map(fmt);
  const named = series.filter((q) => q.name);
  const T = named.length ? 30 : 12;
  const L = 24 + Math.max(...tyLabels.map((t) => t.length)) * CHAR + 6;
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
      if (i % every) return;
      const cx = L + (i + 0.5) * band;
      if (vertical) text(gx, 0, 0, String(c), "end", { transform: `translate(${cx + 4} ${H - B + 8}) rotate(-90)` });
      else text(gx, cx, H - B + 15, String(c));
    });
  } else {
    const xs = pts.map((p) => p[0]);
    const tx = linearTicks(Math.min(...xs), Math.max(...xs), 5, opt.xint);
    const X = (x) => L + (x - tx.lo) / (tx.hi - tx.lo) * (W - L - R);
    for (const v of tx.ticks) text(gx, X(v), H - B + 15, fmt(v));
    for (const q of series) {
      const d = q.points.map((p, i) => (i ? "L" : "M") + X(p[0]).toFixed(1) + " " + Y(p[1]).toFixed(1)).join(" ");
      s.append(svg("path", { d, fill: "none", stroke: q.color, "stroke-width": q.width || 2, "stroke-dasharray": q.dash || "" }));
    }
  }
  // legend: a colour key before each name, in a row above the plot
  const gl = g("legend");
  let lx = L;
  for (const q of named) {
    const item = svg("g", { class: "legend-item", "data-name": q.name });
    item.append(svg("line", { x1: lx, y1: 12, x2: lx + 18, y2: 12, stroke: q.color, "stroke-width": 3, "stroke-dasharray": q.dash || "", class: "legend-key" }));
    text(item, lx + 22, 16, q.name, "start");
    gl.append(item);
    lx += 22 + q.name.length * CHAR + 14;
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
    const L = d.ledger, frac = Math.min(1, L.spent / L.budget);
    const fill = el("div", { class: "spent" + (frac >= 1 ? " full" : "") });
    fill.style.width = (100 * frac).toFixed(2) + "%"; // CSSOM: allowed by the page's CSP
    const bar = el("div", { class: "budget-bar", title: `spent ${L.spent} of ${L.budget}` }, fill);
    const cls = d.class ? `${d.class.states.length} states, ${d.class.chains} chain(s), ${d.class.coverage}${d.class.fitted ? ", fitted" : ""}` : "no class yet";
    const size = d.sizes ? `${d.sizes.series} series, ${d.sizes.readings} readings (longest ${d.sizes.max_length})` : "";
    const card = el("div", { class: "ds" + (d.name === current ? " selected" : ""), "data-name": d.name },
      el("strong", {}, d.name), " — ε spent ", el("span", { class: "spent-text" }, String(L.spent)), ` of ${L.budget}, remaining ${L.remaining} (${L.rule}, ${L.releases} releases)`, bar,
      el("div", { class: "muted" }, cls + (size ? "; " + size : "")));
    card.addEventListener("click", () => select(d.name));
    box.append(card);
    sel.append(el("option", { value: d.name }, d.name));
  }
  if (datasets.length && !datasets.some((d) => d.name === current)) await select(datasets[0].name);
  else if (current) sel.value = current;
}

async function select(name) {
  current = name;
  $("#dataset").value = name;
  $("#work").hidden = false;
  for (const c of document.querySelectorAll(".ds")) c.classList.toggle("selected", c.dataset.name === name);
  await Promise.all([planner(), ledger()]);
}

async function planner() {
  const name = current, box = $("#planner");
  box.replaceChildren(el("p", { class: "muted" }, "computing σ…"));
  const eps = [0.1, 0.25, 0.5, 1, 2, 3, 5];
  const methods = [["exact", "#2b6cb0"], ["approx", "#38a169"], ["groupdp", "#dd6b20"], ["dp", "#a0aec0"]];
  const sig = [], err = [];
  for (const [m, color] of methods) {
    const pts = [], e1 = [];
    for (const e of eps) {
      const r = await api("GET", `/v1/scale?dataset=${encodeURIComponent(name)}&epsilon=${e}&method=${m}`);
      if (r.status === 200 && r.body.applicable && r.body.sigma !== null) { pts.push([e, r.body.sigma]); e1.push([e, r.body.expected_l1_error]); }
    }
    if (pts.length) { sig.push({ name: m, points: pts, color }); err.push({ name: m, points: e1, color }); }
  }
  if (name !== current) return;
  box.replaceChildren(plot(sig, { logy: true, xlabel: "ε", ylabel: "σ (log scale)" }), plot(err, { logy: true, xlabel: "ε", ylabel: "expected L1 error (log scale)" }));
  box.firstChild.id = "planner-sigma";
  box.lastChild.id = "planner-l1";
}

async function ledger() {
  const r = await api("GET", `/v1/datasets/${encodeURIComponent(current)}/ledger`);
  if (r.status !== 200) return;
  const tb = $("#ledger-table tbody");
  tb.replaceChildren();
  const pts = [[0, 0]];
  r.body.releases.forEach((e, i) => {
    tb.append(el("tr", {}, ...[e.id, e.time.slice(0, 19).replace("T", " "), e.token || "cli", e.mechanism, e.epsilon, e.query, e.spent, e.rule].map((v) => el("td", {}, String(v)))));
    pts.push([i + 1, Number(e.spent)]);
  });
  const B = Number(r.body.budget);
  $("#ledger-plot").replaceChildren(plot([
    { name: "cumulative ε", points: pts, color: "#2b6cb0" },
    { name: "budget", points: [[0, B], [Math.max(1, pts.length - 1), B]], color: "#c53030", dash: "4 3" },
  ], { xlabel: "release", ylabel: "ε", ymax: B, xint: true }));
}

// epsilonValue is ε as typed: a number when it is one, else the text
// ("ln(2)", "1/2"), which the server reads as every puff --epsilon does.
function epsilonValue(v) {
  v = v.trim();
  return v !== "" && isFinite(Number(v)) ? Number(v) : v;
}

async function release(e) {
  e.preventDefault();
  const msg = $("#message");
  msg.textContent = "releasing…"; msg.className = "";
  const body = { method: $("#method").value, epsilon: epsilonValue($("#epsilon").value), query: $("#query").value };
  if ($("#window").value.trim()) body.window = $("#window").value.trim();
  const r = await api("POST", `/v1/datasets/${encodeURIComponent(current)}/releases`, body);
  if (r.status !== 201) {
    msg.textContent = (r.status === 409 ? "Refused: " : `Error ${r.status}: `) + r.body.error;
    msg.className = "error";
    await loadDatasets();
    return;
  }
  const rep = r.body;
  msg.textContent = `Released #${rep.id}: ε spent ${rep.ledger.spent} of ${rep.ledger.budget} (${rep.ledger.rule}).`;
  msg.className = "ok";
  const out = $("#result");
  out.replaceChildren();
  const hist = rep.histogram || (rep.windows ? rep.windows[0].histogram : null);
  if (hist) {
    const first = rep.windows ? ` (window ${rep.windows[0].start}, first of ${rep.windows.length})` : "";
    out.append(plot([{ bars: true, points: hist.map((b) => [b.state, b.value]), color: "#2b6cb0" }], { xlabel: "state" + first, ylabel: "private " + (rep.query || (rep.windows ? rep.windows[0].query : "")) }));
    out.lastChild.id = "histogram";
  }
  const audit = rep.windows ? { windows: rep.windows.length, total: rep.total } : { method: rep.method, epsilon: rep.epsilon, sigma: rep.sigma, lipschitz: rep.lipschitz, per_bin_scale: rep.per_bin_scale, noise_scale: rep.noise_scale, guarantee: rep.guarantee, protects: rep.protects, sequences: rep.sequences, observations: rep.observations, warnings: rep.warnings };
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
