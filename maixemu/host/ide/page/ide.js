// maixemu IDE page: frame buffer + LCD streams, terminal, histogram, threshold editor, board pane.
// Plain JavaScript, no library, nothing loaded from elsewhere. Every number shown is computed by
// maixemu's own image methods on the server; this page only draws them.
"use strict";

const TOKEN = new URLSearchParams(location.search).get("token");
const TERMINAL_CHARS = 200000;
const $ = (id) => document.getElementById(id);

function url(path, params) {
  const u = new URL(path, location.href);
  for (const [key, value] of Object.entries(params || {})) {
    if (value !== null && value !== undefined) u.searchParams.set(key, value);
  }
  if (TOKEN) u.searchParams.set("token", TOKEN);
  return u.toString();
}

const state = {
  ws: null,
  frame: { fb: null, lcd: null },
  roi: null,          // [x, y, w, h] in frame-buffer pixels, or null for the whole frame
  drag: null,
  hover: null,
  space: "rgb",
  lastHist: null,
  thrSpace: "lab",
  thrSource: "fb",    // the threshold editor works on the frame buffer ("fb") or a picture file ("file")
  picture: null,      // the picture file's info once the server decoded it
  thr: { lab: [0, 100, -128, 127, -128, 127], gray: [0, 255] },
  buttons: [],
  running: false,
};

// ------------------------------------------------------------------ small request scheduler
// One request of each kind in flight; a newer wish replaces an older one (never a queue).
function makeRefresher(run, minGapMs) {
  let busy = false, wanted = false, last = 0;
  const tick = async () => {
    if (busy || !wanted) return;
    const wait = last + minGapMs - performance.now();
    if (wait > 0) { setTimeout(tick, wait); return; }
    wanted = false; busy = true; last = performance.now();
    try { await run(); } catch (e) { /* shown by run itself */ }
    busy = false;
    if (wanted) tick();
  };
  return () => { wanted = true; tick(); };
}

async function getJSON(path, params) {
  const response = await fetch(url(path, params), { cache: "no-store" });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

// ------------------------------------------------------------------ streams
function startStream(name) {
  const img = $(name);
  let retry = 500;
  const connect = () => { img.src = url(`/stream/${name}.mjpg`, { t: Date.now() }); };
  img.addEventListener("error", () => { setTimeout(connect, retry); retry = Math.min(retry * 2, 5000); });
  img.addEventListener("load", () => { retry = 500; });
  connect();
}

function sizeViewer(name, info) {
  if (!info) return;
  const img = $(name);
  // The frame buffer is the working view: small frames at twice their size; the LCD pane at 1:1.
  const scale = name === "fb" ? (info.width <= 400 ? 2 : 1) : (info.width <= 200 ? 2 : 1);
  // At most the pane's width (a narrow window shrinks the picture instead of spilling over the next pane).
  img.style.width = `${info.width * scale}px`;
  img.style.maxWidth = "100%";
  img.style.height = "auto";
  img.style.aspectRatio = `${info.width} / ${info.height}`;
  state.frame[name] = info;
  const text = `${info.width}x${info.height}` + (info.format ? ` ${info.format}` : "");
  $(`${name}-info`).textContent = text;
  if (name === "fb") {
    const overlay = $("fb-overlay");
    overlay.width = info.width * scale;
    overlay.height = info.height * scale;
    drawOverlay();
  }
}

// ------------------------------------------------------------------ frame buffer overlay: ROI + pixel
function imageXY(event) {
  const info = state.frame.fb;
  if (!info) return null;
  const box = $("fb-overlay").getBoundingClientRect();
  const x = Math.floor((event.clientX - box.left) * info.width / box.width);
  const y = Math.floor((event.clientY - box.top) * info.height / box.height);
  return [Math.max(0, Math.min(info.width - 1, x)), Math.max(0, Math.min(info.height - 1, y))];
}

function drawOverlay() {
  const canvas = $("fb-overlay");
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, canvas.width, canvas.height);
  const info = state.frame.fb;
  const roi = state.drag ? dragRect() : state.roi;
  if (!info || !roi) return;
  const s = canvas.width / info.width;
  ctx.strokeStyle = "#ffd400";
  ctx.lineWidth = 2;
  ctx.strokeRect(roi[0] * s + 1, roi[1] * s + 1, roi[2] * s - 2, roi[3] * s - 2);
}

function dragRect() {
  const [x0, y0] = state.drag.start, [x1, y1] = state.drag.end;
  return [Math.min(x0, x1), Math.min(y0, y1), Math.abs(x1 - x0) + 1, Math.abs(y1 - y0) + 1];
}

function setRoi(roi) {
  state.roi = roi;
  $("roi-info").textContent = roi ? `ROI (${roi.join(", ")})` : "whole frame";
  drawOverlay();
  refreshHistogram();
}

function initOverlay() {
  const overlay = $("fb-overlay");
  overlay.addEventListener("mousedown", (e) => {
    const p = imageXY(e); if (!p) return;
    state.drag = { start: p, end: p };
    e.preventDefault();
  });
  window.addEventListener("mousemove", (e) => {
    if (state.drag) {
      const p = imageXY(e); if (p) { state.drag.end = p; drawOverlay(); }
    }
  });
  overlay.addEventListener("mousemove", (e) => {
    const p = imageXY(e); if (!p) return;
    state.hover = p; refreshPixel();
  });
  window.addEventListener("mouseup", () => {
    if (!state.drag) return;
    const r = dragRect();
    state.drag = null;
    if (r[2] > 1 || r[3] > 1) setRoi(r); else drawOverlay();
  });
  overlay.addEventListener("dblclick", () => setRoi(null));
}

const refreshPixel = makeRefresher(async () => {
  if (!state.hover) return;
  const [x, y] = state.hover;
  try {
    const p = await getJSON("/api/pixel", { x, y });
    const hex = p.rgb565 !== undefined ? `  RGB565 0x${p.rgb565.toString(16).padStart(4, "0")}` : "";
    $("pixel").textContent = `(${p.x}, ${p.y})${hex}  RGB888 (${p.rgb888.join(", ")})  LAB (${p.lab.join(", ")})  gray ${p.gray}`;
  } catch (e) { $("pixel").textContent = String(e.message || e); }
}, 60);

// ------------------------------------------------------------------ histogram + statistics
const CHANNEL_COLOURS = { R: "#ff5050", G: "#50e070", B: "#5090ff", Gray: "#c8c8c8", L: "#e8e8e8", A: "#e070e0",
                          Y: "#e8e8e8", U: "#5090ff", V: "#ff5050" };
const STAT_KEYS = ["mean", "median", "mode", "stdev", "min", "max", "lq", "uq"];

const refreshHistogram = makeRefresher(async () => {
  if (!state.frame.fb) return;
  let h;
  try {
    h = await getJSON("/api/histogram", { space: state.space, roi: state.roi ? state.roi.join(",") : null });
  } catch (e) { $("roi-info").textContent = String(e.message || e); return; }
  state.lastHist = h;
  const box = $("histograms");
  while (box.children.length > h.channels.length) box.lastChild.remove();
  while (box.children.length < h.channels.length) box.appendChild(document.createElement("canvas"));
  h.channels.forEach((channel, i) => drawBins(box.children[i], channel, i, h.channels.length));
  // One row per statistic, one column per channel: narrow enough for any column of the page.
  const head = $("stats").tHead.rows[0];
  while (head.cells.length > 1) head.deleteCell(-1);
  for (const channel of h.channels) {
    const th = document.createElement("th");
    th.textContent = channel.name;
    head.appendChild(th);
  }
  const body = $("stats").tBodies[0];
  body.innerHTML = "";
  for (const key of STAT_KEYS) {
    const row = body.insertRow();
    row.dataset.key = key;
    const name = document.createElement("th");
    name.textContent = key;
    row.appendChild(name);
    for (const channel of h.channels) {
      const cell = row.insertCell();
      cell.textContent = channel.stats[key];
      cell.dataset.key = key;
      cell.dataset.channel = channel.name;
    }
  }
  $("stats").dataset.space = h.space;
  $("stats").dataset.roi = h.roi.join(",");
  $("stats").dataset.seq = h.seq;
}, 250);

function drawBins(canvas, channel, index, count) {
  const width = canvas.clientWidth || 256, height = canvas.clientHeight || 56;
  canvas.width = width; canvas.height = height;
  const ctx = canvas.getContext("2d");
  ctx.clearRect(0, 0, width, height);
  const bins = channel.bins;
  const peak = Math.max(...bins, 1e-9);
  ctx.fillStyle = channel.name === "B" && count === 3 && state.space === "lab" ? "#e0d050" : (CHANNEL_COLOURS[channel.name] || "#ccc");
  const w = width / bins.length;
  bins.forEach((v, i) => {
    const bh = Math.round((v / peak) * (height - 12));
    ctx.fillRect(i * w, height - bh, Math.max(1, w - 0.2), bh);
  });
  ctx.fillStyle = "#8b919a";
  ctx.font = "10px sans-serif";
  ctx.fillText(`${channel.name} ${channel.lo}..${channel.hi}`, 3, 10);
}

// ------------------------------------------------------------------ threshold editor
const THR_RANGES = {
  lab: [["L min", 0, 100], ["L max", 0, 100], ["A min", -128, 127], ["A max", -128, 127], ["B min", -128, 127], ["B max", -128, 127]],
  gray: [["min", 0, 255], ["max", 0, 255]],
};

function buildSliders() {
  const box = $("thr-sliders");
  box.innerHTML = "";
  THR_RANGES[state.thrSpace].forEach(([label, lo, hi], i) => {
    const name = document.createElement("label");
    name.textContent = label;
    const input = document.createElement("input");
    Object.assign(input, { type: "range", min: lo, max: hi, step: 1, id: `thr-${i}` });
    input.value = state.thr[state.thrSpace][i];
    const out = document.createElement("output");
    out.id = `thr-${i}-value`;
    out.textContent = input.value;
    input.addEventListener("input", () => {
      state.thr[state.thrSpace][i] = Number(input.value);
      out.textContent = input.value;
      thresholdChanged();
    });
    box.append(name, input, out);
  });
  thresholdChanged();
}

function thresholdTuple() { return `(${state.thr[state.thrSpace].join(", ")})`; }

function thresholdChanged() {
  $("thr-tuple").textContent = thresholdTuple();
  refreshThreshold();
}

const refreshThreshold = makeRefresher(async () => {
  if (state.thrSource === "fb" ? !state.frame.fb : !state.picture) return;
  const params = { space: state.thrSpace, t: state.thr[state.thrSpace].join(","), invert: $("thr-invert").checked ? 1 : 0,
                   source: state.thrSource };
  const preview = $("thr-preview");
  await new Promise((resolve) => {
    preview.onload = preview.onerror = resolve;
    preview.src = url("/frame/binary.png", { ...params, n: Date.now() });
  });
  try {
    const b = await getJSON("/api/blobs", params);
    const top = b.blobs[0];
    $("thr-blobs").textContent = `${b.count} blob${b.count === 1 ? "" : "s"}` +
      (top ? `; largest (${top.rect.join(", ")}), ${top.pixels} px` : "");
    $("thr-blobs").dataset.count = b.count;
    $("thr-blobs").dataset.source = state.thrSource;
  } catch (e) { $("thr-blobs").textContent = String(e.message || e); }
}, 150);

// The threshold editor on a picture file (as the IDE's threshold editor offers "image file"): the
// file goes to maixemu, which decodes it as the camera would deliver it; the editor then works on it.
async function choosePicture(file) {
  if (!file) return;
  $("thr-source-info").textContent = `reading ${file.name}…`;
  try {
    const response = await fetch(url("/api/picture", { name: file.name }), { method: "POST", body: file, cache: "no-store" });
    const body = await response.json();
    if (!response.ok) throw new Error(body.error || response.statusText);
    state.picture = body;
    $("thr-source-file").disabled = false;
    $("thr-source-file").checked = true;
    setThresholdSource("file");
  } catch (e) {
    $("thr-source-info").textContent = String(e.message || e);
  }
}

function setThresholdSource(source) {
  state.thrSource = source;
  const file = source === "file" && state.picture;
  const img = $("thr-source");
  img.hidden = !file;
  if (file) {
    img.src = url("/frame/picture.png", { n: state.picture.seq });
    const scaled = state.picture.scaled_from ? ` (scaled from ${state.picture.scaled_from.join("x")})` : "";
    $("thr-source-info").textContent = `on ${state.picture.name}, ${state.picture.width}x${state.picture.height}${scaled}`;
  } else {
    $("thr-source-info").textContent = "on the frame buffer";
  }
  $("thr-source-info").dataset.source = source;
  $("thr-from-roi").disabled = source === "file";  // the ROI is the frame buffer's
  refreshThreshold();
}

function thresholdsFromRoi() {
  const h = state.lastHist;
  if (!h) return;
  const want = state.thrSpace === "lab" ? "lab" : "gray";
  const apply = (hist) => {
    state.thr[want] = hist.channels.flatMap((c) => [c.stats.min, c.stats.max]);
    buildSliders();
  };
  if (h.space === want) apply(h);
  else getJSON("/api/histogram", { space: want, roi: state.roi ? state.roi.join(",") : null }).then(apply).catch(() => {});
}

// ------------------------------------------------------------------ terminal
function termClear() { $("terminal").textContent = ""; }

function termSave() {
  const stamp = new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
  const a = document.createElement("a");
  a.href = URL.createObjectURL(new Blob([$("terminal").textContent], { type: "text/plain;charset=utf-8" }));
  a.download = `maixemu-terminal-${stamp}.txt`;
  a.id = "term-download";
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60000);
}

function showView(view) {
  const off = view.preview === false;
  $("preview-off").checked = off;
  $("preview-note").hidden = !off;
  document.body.dataset.preview = off ? "off" : "on";
}

function termWrite(text, stream) {
  const term = $("terminal");
  const atEnd = term.scrollTop + term.clientHeight >= term.scrollHeight - 4;
  const last = term.lastChild;
  if (last && last.className === stream) last.textContent += text;
  else {
    const span = document.createElement("span");
    span.className = stream;
    span.textContent = text;
    term.appendChild(span);
  }
  let total = term.textContent.length;
  while (total > TERMINAL_CHARS && term.firstChild) {
    total -= term.firstChild.textContent.length;
    term.firstChild.remove();
  }
  if (atEnd) term.scrollTop = term.scrollHeight;
}

// ------------------------------------------------------------------ board pane
function buildBoard(board) {
  $("script-name").textContent = board.script || "";
  $("board-profile").textContent = board.profile ? `profile ${board.profile}` : "";
  const box = $("buttons");
  box.innerHTML = "";
  for (const b of board.buttons || []) {
    const el = document.createElement("button");
    el.type = "button";
    el.className = "board-button";
    el.dataset.name = b.name;
    el.textContent = b.label || b.name;
    el.title = `pin ${b.pin}: press and hold`;
    let down = false;
    const press = (on) => {
      if (down === on) return;
      down = on;
      el.classList.toggle("down", on);
      send({ type: "button", name: b.name, pressed: on });
    };
    el.addEventListener("pointerdown", (e) => { el.setPointerCapture(e.pointerId); press(true); });
    el.addEventListener("pointerup", () => press(false));
    el.addEventListener("pointercancel", () => press(false));
    el.addEventListener("lostpointercapture", () => press(false));
    box.appendChild(el);
  }
  const leds = $("leds");
  leds.innerHTML = "";
  for (const led of board.leds || []) {
    const el = document.createElement("span");
    el.className = "led";
    el.dataset.name = led.name;
    el.dataset.colour = led.colour;
    el.dataset.activeLow = led.active_low ? "1" : "0";
    el.innerHTML = "<i></i>";
    el.append(` ${led.name}`);
    el.title = `pin ${led.pin}`;
    leds.appendChild(el);
  }
}

function showLeds(levels) {
  for (const el of document.querySelectorAll(".led")) {
    const level = levels[el.dataset.name];
    const lit = level !== null && level !== undefined && (el.dataset.activeLow === "1" ? level === 0 : level === 1);
    el.dataset.level = level === null || level === undefined ? "" : level;
    el.firstChild.style.background = lit ? el.dataset.colour : "#333";
    el.title = `level ${level === null || level === undefined ? "not driven" : level}${lit ? " (lit)" : ""}`;
  }
}

function fmt(v, unit) { return v === null || v === undefined ? "-" : `${v}${unit || ""}`; }

function showStats(s) {
  $("fps-script").textContent = fmt(s.script_fps);
  $("fps-pc").textContent = fmt(s.pc_fps);
  $("fps-pc").dataset.snapshots = s.snapshots === undefined ? "" : s.snapshots;
  const calls = (s.kpu_calls || []).join(", ");
  $("kpu").textContent = s.kpu_ms ? `${s.kpu_ms} ms (${calls})` : (calls ? `${calls}` : "no KPU call");
}

function showStatus(st) {
  const pill = $("status");
  state.running = st.state === "running";
  const failed = st.state === "ended" && st.error && !st.error.interrupt;
  pill.dataset.state = failed ? "error" : st.state;
  pill.textContent = st.state === "ended" ? `ended (exit ${st.exit_code})` : st.state;
  $("stop").disabled = !state.running;
  const bar = $("error-bar");
  if (st.state === "ended" && st.error) {
    const where = st.error.line ? ` — ${st.error.file || "script"} line ${st.error.line}` : "";
    bar.textContent = `${st.error.summary}${where}`;
    bar.hidden = false;
  } else if (st.state === "running") {
    bar.hidden = true;
  }
}

function showRecording(r) {
  const button = $("record");
  button.classList.toggle("on", !!r.active);
  button.textContent = r.active ? "\u25A0 Stop recording" : "\u25CF Record";
  const box = $("recordings");
  if (!r.active && r.file && r.index !== undefined && r.frames) {
    box.innerHTML = "";
    const a = document.createElement("a");
    a.href = url(`/recording/${r.index}`);
    a.textContent = r.file.split(/[\\/]/).pop();
    a.id = "recording-link";
    box.append("saved ", a);
  } else if (r.active) {
    box.textContent = r.finishing ? "finishing the video…" : "recording…";
  }
}

// ------------------------------------------------------------------ websocket
function send(message) {
  if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify(message));
}

function connect() {
  const ws = new WebSocket(url("/ws").replace(/^http/, "ws"));
  state.ws = ws;
  ws.onopen = () => { $("connection").textContent = "connected"; };
  ws.onclose = () => {
    $("connection").textContent = "disconnected — retrying";
    $("status").dataset.state = "ended";
    setTimeout(connect, 1000);
  };
  ws.onmessage = (event) => {
    const m = JSON.parse(event.data);
    switch (m.type) {
      case "term": termWrite(m.text, m.stream); break;
      case "status": showStatus(m.status); break;
      case "stats": showStats(m.stats); break;
      case "leds": showLeds(m.leds); break;
      case "board": buildBoard(m.board); break;
      case "recording": showRecording(m.recording); break;
      case "view": showView(m.view); break;
      case "frame":
        $(m.stream).dataset.seq = m.seq;  // which picture the pane was told of (the preview toggle's effect)
        if (m.frame) {
          const old = state.frame[m.stream];
          if (!old || old.width !== m.frame.width || old.height !== m.frame.height || old.format !== m.frame.format) sizeViewer(m.stream, m.frame);
          if (m.stream === "fb") { refreshHistogram(); refreshThreshold(); if (state.hover) refreshPixel(); }
        }
        break;
      case "error": termWrite(`[page] ${m.text}\n`, "notice"); break;
      default: break;
    }
  };
}

// ------------------------------------------------------------------ wiring
function init() {
  $("save-png").href = url("/frame/fb.png", { download: 1 });
  $("run").addEventListener("click", () => send({ type: "run" }));
  $("stop").addEventListener("click", () => send({ type: "stop" }));
  $("record").addEventListener("click", () => send({ type: "record", on: !$("record").classList.contains("on") }));
  for (const radio of document.querySelectorAll("input[name=space]")) {
    radio.addEventListener("change", () => { state.space = radio.value; refreshHistogram(); });
  }
  for (const radio of document.querySelectorAll("input[name=thr-space]")) {
    radio.addEventListener("change", () => { state.thrSpace = radio.value; buildSliders(); });
  }
  $("thr-invert").addEventListener("change", refreshThreshold);
  for (const radio of document.querySelectorAll("input[name=thr-source]")) {
    radio.addEventListener("change", () => setThresholdSource(radio.value));
  }
  $("thr-file").addEventListener("change", () => choosePicture($("thr-file").files[0]));
  $("preview-off").addEventListener("change", () => send({ type: "preview", on: !$("preview-off").checked }));
  $("term-clear").addEventListener("click", termClear);
  $("term-save").addEventListener("click", termSave);
  $("thr-from-roi").addEventListener("click", thresholdsFromRoi);
  $("thr-copy").addEventListener("click", () => {
    const text = `find_blobs([${thresholdTuple()}])`;
    if (navigator.clipboard) navigator.clipboard.writeText(text).catch(() => {});
  });
  $("input-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const text = $("stdin").value;
    termWrite(text + "\n", "echo");
    send({ type: "input", text });
    $("stdin").value = "";
  });
  initOverlay();
  buildSliders();
  connect();
  // The streams never "finish loading": start them after the page's load event, so the page is
  // complete even when the script never shows an LCD picture.
  const streams = () => { startStream("fb"); startStream("lcd"); };
  if (document.readyState === "complete") streams(); else window.addEventListener("load", streams);
}

init();
