// eigstream dashboard: polls /api/metrics every second and draws on
// <canvas> itself (no library, nothing fetched from elsewhere).
// For tests: document.body.dataset.samples = data points plotted in the
// latency chart, dataset.idle = its intervals without a frame (drawn as
// gaps, not at the axis floor), dataset.updated = time of the last update
// (ISO 8601).
"use strict";

const COLORS = getComputedStyle(document.documentElement);
const color = (name) => COLORS.getPropertyValue(name).trim();
let lastOk = 0;

function formatUs(us) {
  if (!(us > 0)) return "0";
  if (us < 1000) return us.toFixed(us < 10 ? 1 : 0) + " µs";
  if (us < 1e6) return (us / 1000).toFixed(us < 1e4 ? 2 : 1) + " ms";
  return (us / 1e6).toFixed(2) + " s";
}

// A canvas sized to its box in device pixels; returns its 2D context and size.
function prepare(canvas) {
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth || 600, h = canvas.clientHeight || 240;
  canvas.width = Math.round(w * ratio);
  canvas.height = Math.round(h * ratio);
  const g = canvas.getContext("2d");
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, w, h);
  g.font = "13px system-ui, sans-serif";
  return { g, w, h };
}

// Lines over x (seconds of uptime); series: [{name, color, values, dash, thin}].
// log: logarithmic y (latencies), where a value <= 0 is an interval without
// a frame: the line breaks there (a gap) instead of dropping to the floor.
// Returns {drawn, idle}: points drawn, points left out as gaps.
function drawLines(canvas, x, series, opts) {
  const { g, w, h } = prepare(canvas);
  const left = 70, right = 10, top = 24, bottom = 24;
  const all = series.flatMap((s) => s.values).filter((v) => v > 0 || !opts.log);
  let lo = opts.log ? Math.min(...all) : 0, hi = Math.max(...all, opts.log ? 1 : 1e-9);
  if (!isFinite(lo) || lo <= 0) lo = opts.log ? 1 : 0;
  if (opts.log) { lo = Math.pow(10, Math.floor(Math.log10(lo))); hi = Math.pow(10, Math.ceil(Math.log10(hi * 1.01))); }
  else hi *= 1.1;
  const x0 = x.length ? x[0] : 0, x1 = x.length > 1 ? x[x.length - 1] : x0 + 1;
  const px = (t) => left + (w - left - right) * (t - x0) / (x1 - x0 || 1);
  const py = (v) => {
    const f = opts.log ? (Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))
                       : (v - lo) / (hi - lo || 1);
    return h - bottom - (h - top - bottom) * f;
  };
  g.strokeStyle = color("--line"); g.fillStyle = color("--dim"); g.lineWidth = 1;
  const ticks = opts.log ? [] : [0, 0.25, 0.5, 0.75, 1].map((f) => lo + f * (hi - lo));
  if (opts.log) for (let v = lo; v <= hi * 1.0001; v *= 10) ticks.push(v);
  for (const v of ticks) {
    g.beginPath(); g.moveTo(left, py(v)); g.lineTo(w - right, py(v)); g.stroke();
    g.fillText(opts.format(v), 4, py(v) + 4);
  }
  g.fillText(`last ${Math.round(x1 - x0)} s`, w - right - 80, h - 6);
  let drawn = 0, idle = 0, legend = left;
  for (const s of series) {
    g.strokeStyle = s.color; g.lineWidth = s.thin ? 1 : 2; g.setLineDash(s.dash ? [8, 6] : []);
    g.beginPath();
    let pen = false;
    s.values.forEach((v, i) => {
      if (opts.log && !(v > 0)) { pen = false; idle++; return; }
      if (pen) g.lineTo(px(x[i]), py(v)); else g.moveTo(px(x[i]), py(v));
      pen = true; drawn++;
    });
    g.stroke();
    g.setLineDash([]); g.fillStyle = s.color; g.fillText(s.name, legend, 14); legend += g.measureText(s.name).width + 24;
  }
  return { drawn, idle };
}

// Bars of the whole-run end-to-end histogram ([[upper_us, count], ...]).
function drawHistogram(canvas, buckets) {
  const { g, w, h } = prepare(canvas);
  const bottom = 24, top = 10;
  if (!buckets.length) { g.fillStyle = color("--dim"); g.fillText("no frames yet", 10, 30); return; }
  const max = Math.max(...buckets.map((b) => b[1]));
  const bw = (w - 20) / buckets.length;
  buckets.forEach(([upper, count], i) => {
    const bh = (h - top - bottom) * count / max;
    g.fillStyle = color("--in");
    g.fillRect(10 + i * bw + 1, h - bottom - bh, Math.max(bw - 2, 1), bh);
    if (i % Math.ceil(buckets.length / 6) === 0) {
      g.fillStyle = color("--dim");
      g.fillText("≤" + (upper < 0 ? "∞" : formatUs(upper)), 10 + i * bw, h - 6);
    }
  });
}

// Rows of label, bar and number into a container.
function drawBars(element, entries, bad) {
  const max = Math.max(1, ...entries.map((e) => e[1]));
  element.replaceChildren(...entries.map(([name, value, total]) => {
    const row = document.createElement("div"); row.className = "row";
    const label = document.createElement("span"); label.textContent = name;
    const bar = document.createElement("div"); bar.className = "bar" + (bad && value > 0 ? " bad" : "");
    bar.style.width = (100 * value / (total || max)) + "%";
    const n = document.createElement("span"); n.className = "n"; n.textContent = total ? `${value}/${total}` : value;
    row.append(label, bar, n);
    return row;
  }));
}

function update(m) {
  const h = m.history, f = m.frames, q = m.queues, e2e = m.latency_us.end_to_end;
  document.getElementById("summary").textContent =
    `${m.backend} backend · GPU ${m.gpu} · complex ${m.precision} · n = ${m.n} · ${m.matrices} matrices · mode ${m.mode} · v${m.version} · up ${Math.round(m.uptime_s)} s`;
  document.getElementById("k-in").textContent = m.rates.in_per_s.toFixed(1);
  document.getElementById("k-out").textContent = m.rates.out_per_s.toFixed(1);
  document.getElementById("k-p99").textContent = formatUs(e2e.p99);
  document.getElementById("k-deadline").textContent = formatUs(m.deadline_ms * 1000);
  document.getElementById("k-bad").textContent = `${f.late} / ${f.dropped}`;
  document.getElementById("k-rejected").textContent = f.rejected;
  const deadline = h.uptime_s.map(() => m.deadline_ms * 1000);
  // max first and thin, so that p99 (often equal to max in a quiet interval)
  // is drawn over it and stays visible.
  const latency = drawLines(document.getElementById("c-latency"), h.uptime_s, [
    { name: "max", color: color("--max"), values: h.end_to_end_max_us, thin: true },
    { name: "p99", color: color("--p99"), values: h.end_to_end_p99_us },
    { name: "p50", color: color("--p50"), values: h.end_to_end_p50_us },
    { name: "deadline", color: color("--deadline"), values: deadline, dash: true },
  ], { log: true, format: formatUs });
  drawLines(document.getElementById("c-rate"), h.uptime_s, [
    { name: "in", color: color("--in"), values: h.in_per_s },
    { name: "out", color: color("--out"), values: h.out_per_s },
  ], { log: false, format: (v) => v.toFixed(1) });
  drawLines(document.getElementById("c-stage"), h.uptime_s, [
    { name: "receive", color: "#a371f7", values: h.receive_mean_us },
    { name: "form", color: color("--in"), values: h.form_mean_us },
    { name: "solve", color: color("--p99"), values: h.solve_mean_us },
    { name: "publish", color: color("--out"), values: h.publish_mean_us },
  ], { log: true, format: formatUs });
  drawHistogram(document.getElementById("c-histogram"), e2e.buckets);
  drawBars(document.getElementById("queues"), [
    ["form queue", q.form, q.capacity], ["solve queue", q.solve, q.capacity], ["publish queue", q.publish, q.capacity],
    ["frames free", q.frames_free, q.frames_total], ["outputs free", q.outputs_free, q.outputs_total]]);
  // Each worker's share of the last interval spent solving, and the frames
  // dealt to it; then what the reorder window let through out of order.
  drawBars(document.getElementById("workers"), (m.workers || []).map((k) =>
    [`worker ${k.worker} · ${k.device} · ${k.frames} frames`, Math.round(100 * k.load), 100])
    .concat([["reorder gaps", m.reorder.gaps], ["out of order", m.reorder.out_of_order]]));
  drawBars(document.getElementById("drops"), Object.entries(m.dropped), true);
  drawBars(document.getElementById("rejects"), Object.entries(m.rejected).filter(([, v]) => v > 0)
    .concat(f.rejected === 0 ? [["none", 0]] : []), true);
  // The self-check (docs/daemon.md): the largest ratios so far against the
  // threshold 60 (a bar past 60 turns red), failures against matrices checked.
  const c = m.self_check;
  const ratio = (name, value) => [`${name} max ${value.toPrecision(3)}`, Math.min(value, 120), 120];
  drawBars(document.getElementById("self-check"), [
    [`failed / ${c.checked} checked`, c.failed, Math.max(1, c.checked)],
    ratio("residual", c.residual_max), ratio("orthogonality", c.orthogonality_max),
    [`cost mean ${formatUs(c.cost_mean_us)}, max ${formatUs(c.cost_max_us)}`, 0, 1]],
    c.failed > 0);
  document.body.dataset.samples = String(latency.drawn - deadline.length);
  document.body.dataset.idle = String(latency.idle);
  document.body.dataset.updated = new Date().toISOString();
}

async function poll() {
  try {
    const r = await fetch("/api/metrics", { cache: "no-store" });
    if (r.ok) { update(await r.json()); lastOk = Date.now(); }
  } catch (err) {
    // The daemon stopped or restarts: keep the last picture, mark it stale.
  }
  const status = document.getElementById("status");
  const fresh = Date.now() - lastOk < 3000;
  status.className = "status " + (fresh ? "ok" : "stale");
  status.textContent = fresh ? "● live" : "● no data";
  setTimeout(poll, 1000);
}

poll();
