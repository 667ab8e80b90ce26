// The LOCA trajectory viewer: a table of episodes (#/) and one episode (#/e/KEY), drawn from the
// JSON endpoints of `loca view`. Every text from a run is set as text, never parsed as HTML.
"use strict";

const PAGE = 100;
const FILTERS = [["task", "task"], ["length", "length"], ["agent", "agent"], ["strategy", "strategy"],
                 ["terminal_state", "terminal state"], ["passed", "passed"]];
const SVG = "http://www.w3.org/2000/svg";
const list = {filters: {}, offset: 0};
let episode = null;  // {key, offset, total, loading}

const $ = (selector) => document.querySelector(selector);
const fmt = (n) => (typeof n === "number" ? n.toLocaleString("en-US") : n == null ? "–" : String(n));

function h(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value == null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child == null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function s(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
}

async function api(path, params) {
  const url = new URL(path, location.origin);
  for (const [name, value] of Object.entries(params || {})) {
    if (value !== "" && value != null) url.searchParams.set(name, value);
  }
  const response = await fetch(url);
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function show(id) {
  for (const view of ["list-view", "episode-view"]) $("#" + view).hidden = view !== id;
  $("#error").hidden = true;
}

function fail(error) {
  $("#error").textContent = String(error.message || error);
  $("#error").hidden = false;
}

// --- the episode table ----------------------------------------------------------------------

async function showList() {
  show("list-view");
  document.title = "LOCA trajectories";
  const data = await api("/api/episodes", {...list.filters, offset: list.offset, limit: PAGE});
  $("#runs").textContent = data.runs.map((path) => path.replace(/\/+$/, "").split("/").pop()).join(" · ");
  $("#runs").title = data.runs.join("\n");
  drawFilters(data.filters);
  $("#count").textContent = `${data.total} episode${data.total === 1 ? "" : "s"}` +
    (data.total > PAGE ? `, ${data.offset + 1}–${data.offset + data.items.length} shown` : "");
  $("#episodes tbody").replaceChildren(...data.items.map(row));
  const pager = [];
  if (data.offset > 0) pager.push(h("button", {type: "button", onclick: () => page(-PAGE)}, "previous"));
  if (data.offset + data.items.length < data.total) {
    pager.push(h("button", {type: "button", onclick: () => page(PAGE)}, "next"));
  }
  $("#pager").replaceChildren(...pager);
}

function page(step) {
  list.offset = Math.max(0, list.offset + step);
  showList().catch(fail);
}

function drawFilters(values) {
  const form = $("#filters");
  form.replaceChildren(...FILTERS.map(([name, label]) => {
    const select = h("select", {id: "filter-" + name, name, onchange: (event) => {
      list.filters[name] = event.target.value;
      list.offset = 0;
      showList().catch(fail);
    }}, h("option", {value: ""}, "all"), values[name].map((v) => h("option", {value: v}, v)));
    select.value = list.filters[name] || "";
    return h("label", {}, label, select);
  }));
}

function row(r) {
  const open = () => { location.hash = "#/e/" + encodeURIComponent(r.key); };
  return h("tr", {"data-key": r.key, onclick: open},
    h("td", {}, h("a", {href: "#/e/" + encodeURIComponent(r.key)}, r.task)), h("td", {}, r.length),
    h("td", {}, r.seed), h("td", {}, r.agent), h("td", {}, r.strategy), h("td", {}, r.terminal_state),
    h("td", {class: r.passed}, r.passed), h("td", {class: "num"}, fmt(r.turns)),
    h("td", {class: "num"}, fmt(r.tool_calls)), h("td", {class: "num"}, fmt(r.peak_request_tokens)),
    h("td", {class: "num"}, fmt(r.trajectory_tokens)), h("td", {class: "num"}, fmt(r.firings)),
    h("td", {}, r.failed_checks.join(", ")), h("td", {}, r.run));
}

// --- one episode --------------------------------------------------------------------------------

async function showEpisode(key) {
  show("episode-view");
  $("#timeline").replaceChildren();
  $("#chart").replaceChildren();
  const summary = await api("/api/episode", {key});
  const r = summary.row;
  document.title = `${r.task} ${r.length} s${r.seed} · LOCA`;
  $("#runs").textContent = r.run;
  $("#title").textContent = `${r.task} · ${r.length} · seed ${r.seed} · ${r.agent} · ${r.strategy}`;
  const fact = (label, value, cls) => h("span", {}, label + " ", h("b", {class: cls}, fmt(value)));
  $("#facts").replaceChildren(...[
    fact("terminal state", r.terminal_state), fact("passed", r.passed, r.passed), fact("reward", r.reward),
    fact("turns", r.turns), fact("tool calls", r.tool_calls), fact("peak request", r.peak_request_tokens),
    fact("trajectory", r.trajectory_tokens), fact("tools", summary.tools.count),
    fact("tool schemas", summary.tools.tokens), fact("episode", r.episode_id),
    summary.error ? fact("error", summary.error.message || JSON.stringify(summary.error), "no") : null,
  ].filter(Boolean));
  $("#problems").replaceChildren(...summary.problems.map((p) => h("p", {}, p)));
  $("#checks tbody").replaceChildren(...summary.checks.map((c) => h("tr", {"data-check": c.name},
    h("td", {}, c.name), h("td", {class: c.passed ? "yes" : "no"}, c.passed ? "yes" : "no"),
    h("td", {}, c.detail || ""))));
  drawChart(summary.series, ((summary.header.config || {}).context || {}).max_context_tokens);
  $("#entry-count").textContent = `(${fmt(summary.entries)} entries)`;
  episode = {key, offset: 0, total: summary.entries, loading: false};
  await loadMore();
}

async function loadMore() {
  const mine = episode;
  if (!mine || mine.loading || mine.offset >= mine.total) return;
  mine.loading = true;
  try {
    const data = await api("/api/entries", {key: mine.key, offset: mine.offset, limit: PAGE});
    if (episode !== mine) return;
    $("#timeline").append(...data.items.map(entry));
    mine.offset += data.items.length;
    mine.total = data.total;
    $("#more").hidden = mine.offset >= mine.total;
  } finally {
    mine.loading = false;
  }
}

function drawChart(series, window) {
  if (!series.length) {
    $("#chart").replaceChildren(h("p", {}, "no model calls recorded"));
    return;
  }
  const W = 900, H = 240, L = 64, R = 16, T = 26, B = 30;
  const peak = Math.max(...series.map((p) => p.predicted || 0));
  const high = Math.max(peak, window && window < 1.6 * peak ? window : 0) || 1;
  const raw = high / 4, unit = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * unit).find((v) => v >= raw);
  const top = step * Math.ceil(high / step);
  const x = (i) => L + (series.length === 1 ? (W - L - R) / 2 : i * (W - L - R) / (series.length - 1));
  const y = (v) => T + (H - T - B) * (1 - v / top);
  const svg = s("svg", {width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img",
                        "aria-label": "context size per turn"});
  svg.append(s("line", {class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B}),
             s("line", {class: "axis", x1: L, y1: T, x2: L, y2: H - B}));
  for (let v = 0; v <= top; v += step) {
    svg.append(s("text", {x: L - 6, y: y(v) + 4, "text-anchor": "end"}, fmt(v / 1000) + "K"));
  }
  const every = Math.ceil(series.length / 15);
  series.forEach((p, i) => {
    if (i % every === 0) svg.append(s("text", {x: x(i), y: H - B + 16, "text-anchor": "middle"}, p.turn));
  });
  svg.append(s("text", {x: W - R, y: H - 4, "text-anchor": "end"}, "turn"));
  if (window && window <= top) {
    svg.append(s("line", {class: "budget", x1: L, y1: y(window), x2: W - R, y2: y(window)}),
               s("text", {x: W - R, y: y(window) - 4, "text-anchor": "end"}, `window ${fmt(window)}`));
  }
  svg.append(s("polyline", {class: "line", points: series.map((p, i) => `${x(i)},${y(p.predicted || 0)}`).join(" ")}));
  series.forEach((p, i) => {
    const point = s("circle", {class: "point", cx: x(i), cy: y(p.predicted || 0), r: 4, "data-turn": p.turn,
                               "data-tokens": p.predicted},
                    s("title", {}, `turn ${p.turn}: ${fmt(p.predicted)} tokens, ${fmt(p.view_messages)} messages ` +
                                   (p.calls ? `in view, the largest of ${p.calls} calls pooled here ` : "in view ") +
                                   "(click: go to the turn)"));
    point.addEventListener("click", () => goToTurn(p.turn).catch(fail));
    svg.append(point);
    if (p.fired.length) {
      const fired = p.fired.map((name) => `${name} freed ${fmt(p.freed[name] || 0)}`).join("; ");
      svg.append(s("path", {class: "firing", d: `M${x(i) - 6},${T - 14} h12 l-6,10 z`, "data-turn": p.turn,
                            "data-fired": p.fired.join(" ")}, s("title", {}, `turn ${p.turn}: ${fired}`)));
    }
  });
  $("#chart").replaceChildren(svg, h("p", {class: "meta"},
    "predicted request size before each model call; ▼ a strategy fired before it (hover for what it freed)" +
    (series.some((p) => p.calls) ? "; long episodes pool runs of calls into their largest" : "")));
}

async function goToTurn(turn) {
  const selector = `#timeline li.request[data-turn="${turn}"]`;
  while (!document.querySelector(selector) && episode && episode.offset < episode.total) {
    const before = episode.offset;
    await loadMore();
    if (episode.offset === before) return;
  }
  const target = document.querySelector(selector);
  if (target) target.scrollIntoView({block: "start"});
}

// --- ledger entries -----------------------------------------------------------------------------

function entry(e) {
  switch (e.kind) {
    case "message": return message(e);
    case "request": return h("li", {class: "request", "data-turn": e.turn},
      `turn ${e.turn} · ${e.purpose === "main" ? "" : e.purpose + " "}request ${fmt(e.predicted)} tokens · ` +
      `${fmt(e.view_messages)} messages in view` + (e.fired.length ? ` · fired: ${e.fired.join(", ")}` : ""));
    case "strategy": return strategy(e);
    default: return event(e);
  }
}

function event(e) {
  const p = e.payload || {};
  const said = {
    llm_retry: () => [`turn ${fmt(p.turn)}`, `attempt ${fmt(p.number)}`, p.outcome, p.status ? `HTTP ${p.status}` : null,
      `waited ${fmt(p.wait_s)} s`, p.message],
    verdict: () => [p.success ? "passed" : "failed", `reward ${fmt(p.reward)}`, p.graded ? null : "not graded"],
    terminal: () => [`state ${p.state}`, p.error ? `error: ${p.error.message || JSON.stringify(p.error)}` : null],
  }[e.kind];
  return h("li", {class: e.kind}, meta(h("span", {class: "role"}, e.type), ...(said ? said() : [])),
    h("details", {open: !said}, h("summary", {}, "details"), h("pre", {}, e.text)));
}

function meta(...items) {
  const shown = items.filter((x) => x != null && x !== false && x !== "");
  return h("div", {class: "meta"}, shown.map((x) => (x instanceof Node ? x : h("span", {}, x))));
}

function message(e) {
  const tool = e.role === "tool";
  const cleared = e.effects.some((x) => x.effect === "cleared");
  const li = h("li", {class: `message ${e.role}${cleared ? " cleared-result" : ""}${e.is_error ? " error" : ""}`,
                      "data-mid": e.mid});
  const run = e.exec || {};
  li.append(meta(h("span", {class: "role"}, tool ? "result" : e.role),
    tool ? h("span", {class: "result-name"}, e.name) : null, tool ? `call ${e.call_id}` : null,
    e.origin !== "model" && e.origin !== "tool" ? e.origin : null, `#${e.mid}`, `turn ${e.turn}`,
    `${fmt(e.tokens)} tokens`, run.latency_s != null ? `${run.latency_s.toFixed(3)} s` : null,
    run.status && run.status !== "executed" ? run.status : null, e.is_error ? "error" : null,
    e.parent_call_id ? `nested in ${e.parent_call_id}` : null,
    e.response && e.response.finish_reason ? `finish: ${e.response.finish_reason}` : null,
    e.response && e.response.attempts > 1 ? `${e.response.attempts} attempts` : null));

  for (const part of e.parts) {
    if (part.type === "tool_call") {
      li.append(h("div", {class: "call", "data-call": part.call_id}, h("span", {class: "name"}, part.name),
        ` (${part.call_id})`, part.parse_error ? ` — arguments not JSON: ${part.parse_error}` : null,
        h("pre", {class: "args"}, part.arguments)));
    } else {
      li.append(h("pre", {class: part.type}, part.type === "reasoning" ? "[reasoning] " : "", part.text));
    }
  }
  if (e.content != null) li.append(h("pre", {class: "content"}, e.content));
  if (e.folded) {
    const total = e.content_chars + e.parts.reduce((n, p) => n + p.chars, 0);
    li.append(h("button", {type: "button", class: "expand", onclick: () => expand(li, e.mid)},
      `show all (${fmt(total)} characters)`));
  }
  li.append(...e.effects.map(effect));
  return li;
}

async function expand(li, mid) {
  try {
    li.replaceWith(message(await api("/api/message", {key: episode.key, mid})));
  } catch (error) {
    fail(error);
  }
}

function effect(x) {
  const by = `at turn ${x.turn} by ${x.strategy}`;
  const text = {
    cleared: x.removed_with_call ? `Removed from the model's view with its call ${by}.`
      : [`Cleared from the model's view ${by}; the model saw instead: `, h("q", {}, x.placeholder || "")],
    hidden: `Left the model's view ${by}.`,
    shortened: `Shortened in the model's view ${by} (its middle cut).`,
  }[x.effect] || `${x.effect} ${by}.`;
  return h("div", {class: "effect", "data-effect": x.effect}, text);
}

function strategy(e) {
  const touched = Object.entries(e.touched).map(([label, mids]) => {
    const shown = mids.slice(0, 12).map((m) => h("a", {href: "#", onclick: (event) => {
      event.preventDefault();
      const target = document.querySelector(`#timeline li[data-mid="${m}"]`);
      if (target) target.scrollIntoView({block: "center"});
    }}, `#${m}`));
    return h("span", {}, ` · ${label}: `, shown.flatMap((a, i) => (i ? [", ", a] : [a])),
      mids.length > 12 ? ` and ${mids.length - 12} more` : "");
  });
  const freed = e.freed != null ? ` · ${fmt(e.tokens_before)} → ${fmt(e.tokens_after)} tokens (freed ${fmt(e.freed)})` : "";
  const extra = Object.keys(e.extra).length ? h("pre", {}, JSON.stringify(e.extra, null, 1)) : null;
  return h("li", {class: "strategy", "data-strategy": e.name},
    h("div", {}, h("span", {class: "role"}, "strategy"), ` ${e.name}: ${e.decision} at turn ${fmt(e.turn)}${freed}`,
      touched), extra);
}

// --- routing ------------------------------------------------------------------------------------

function route() {
  const match = location.hash.match(/^#\/e\/(.+)$/);
  (match ? showEpisode(decodeURIComponent(match[1])) : showList()).catch(fail);
}

$("#more").addEventListener("click", () => loadMore().catch(fail));
new IntersectionObserver((seen) => {
  if (seen.some((x) => x.isIntersecting)) loadMore().catch(fail);
}).observe($("#more"));
window.addEventListener("hashchange", route);
route();
