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

// plot draws lines [{name, points: [[x, y]...], color}] and optional bars.
function plot(series, opt) {
  const W = 480, H = 220, L = 56, R = 10, T = 10, B = 36;
  const s = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img" });
  const pts = series.flatMap((q) => q.points);
  if (pts.length === 0) return s;
  const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
  let x0 = Math.min(...xs), x1 = Math.max(...xs), y0 = Math.min(0, ...ys), y1 = Math.max(...ys, opt.ymax || 0);
  if (opt.logy) { y0 = Math.log10(Math.max(1e-300, Math.min(...ys))); y1 = Math.log10(Math.max(...ys)); }
  if (x1 === x0) x1 = x0 + 1;
  if (y1 === y0) y1 = y0 + 1;
  const X = (x) => L + (x - x0) / (x1 - x0) * (W - L - R);
  const Y = (y) => T + (1 - ((opt.logy ? Math.log10(y) : y) - y0) / (y1 - y0)) * (H - T - B);
  s.append(svg("line", { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#999" }));
  s.append(svg("line", { x1: L, y1: T, x2: L, y2: H - B, stroke: "#999" }));
  const lab = (x, y, t, a) => { const e = svg("text", { x, y, "text-anchor": a || "middle" }); e.textContent = t; s.append(e); };
  lab((L + W - R) / 2, H - 4, opt.xlabel || "");
  lab(4, T + 8, opt.ylabel || "", "start");
  for (const v of [x0, (x0 + x1) / 2, x1]) lab(X(v), H - B + 14, fmt(v));
  for (const f of [0, 0.5, 1]) { const yv = y0 + f * (y1 - y0); lab(L - 4, Y(opt.logy ? Math.pow(10, yv) : yv) + 4, fmt(opt.logy ? Math.pow(10, yv) : yv), "end"); }
  let legend = 0;
  for (const q of series) {
    if (q.bars) {
      const w = (W - L - R) / q.points.length * 0.8;
      q.points.forEach(([x, y], i) => {
        const bx = L + (i + 0.1) * (W - L - R) / q.points.length;
        const top = Y(Math.max(y, y0)), base = Y(Math.max(0, y0));
        s.append(svg("rect", { x: bx, y: Math.min(top, base), width: w, height: Math.abs(base - top) || 1, fill: q.color, class: "bar" }));
      });
      continue;
    }
    const d = q.points.map((p, i) => (i ? "L" : "M") + X(p[0]).toFixed(1) + " " + Y(p[1]).toFixed(1)).join(" ");
    s.append(svg("path", { d, fill: "none", stroke: q.color, "stroke-width": q.width || 2, "stroke-dasharray": q.dash || "" }));
    if (q.name) { lab(W - R - 4, T + 12 + 13 * legend, q.name, "end"); s.lastChild.setAttribute("fill", q.color); legend++; }
  }
  return s;
}

function fmt(v) {
  if (!isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-2)) return v.toExponential(1);
  return (Math.round(v * 100) / 100).toString();
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
  box.replaceChildren(plot(sig, { logy: true, xlabel: "ε", ylabel: "σ (log scale)" }), plot(err, { logy: true, xlabel: "ε", ylabel: "expected L1 error of the counts" }));
  box.firstChild.id = "planner-sigma";
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
  ], { xlabel: "release", ylabel: "ε", ymax: B }));
}

async function release(e) {
  e.preventDefault();
  const msg = $("#message");
  msg.textContent = "releasing…"; msg.className = "";
  const body = { method: $("#method").value, epsilon: Number($("#epsilon").value), query: $("#query").value };
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
  if (hist) out.append(plot([{ bars: true, points: hist.map((b, i) => [i, b.value]), color: "#2b6cb0" }], { xlabel: hist.map((b) => b.state).slice(0, 8).join(" · ") + (hist.length > 8 ? " …" : ""), ylabel: "private " + (rep.query || (rep.windows ? rep.windows[0].query : "")) }));
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
