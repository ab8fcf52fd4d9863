// The chunk explorer's front end: one file, for both places it runs (labkit/explorer_widget.py).
//
// - In a live kernel, it is an anywidget's module: a control moved sets the model's
//   "setting", Python computes that setting's chunks and counts (labkit/explorer.py)
//   and sends them back as "view".
// - In a page with no kernel (a notebook exported to HTML), the same code is inlined
//   in the output's HTML with a grid of settings computed ahead, and a small model
//   of its own answers from that grid; the sliders then move over the grid's values.
//
// No build step and nothing from the web: plain browser JavaScript, no imports.
// Python appends the one line that differs, `export default { render }` for the
// widget or a call of mountStatic for the page. Every chunk is drawn from its own
// start and end, in code points as Python counts them (Array.from, not UTF-16
// indexes), and each mark carries data-start and data-end so a test can check
// that its text is the page's text at those offsets.

function element(tag, attributes, text) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}

// On a control: JupyterLab's shortcuts leave its keys to it. Without this, a notebook in
// command mode takes a focused slider's arrow keys, and it never moves by keyboard.
const OWN_KEYS = { "data-lm-suppress-shortcuts": "true" };

// A slider over a control's values: the grid's (index positions) or a live range.
function slider(label, choices, value, onChange) {
  const box = element("label", { class: "explorer-control", style: "margin-right:18px;white-space:nowrap" });
  const input = element("input", { type: "range", class: `explorer-${label}`, ...OWN_KEYS });
  const shown = element("span", { class: "explorer-value", style: "display:inline-block;min-width:3em" });
  const values = choices.values;
  if (values) {
    input.min = 0;
    input.max = values.length - 1;
    input.step = 1;
    input.value = Math.max(0, values.indexOf(value));
  } else {
    input.min = choices.min;
    input.max = choices.max;
    input.step = choices.step;
    input.value = value;
  }
  const read = () => (values ? values[Number(input.value)] : Number(input.value));
  input.addEventListener("input", () => {
    shown.textContent = String(read());
    onChange(read());
  });
  shown.textContent = String(read());
  box.append(`${label} `, input, " ", shown);
  return box;
}

// The stretches between every chunk start and end, each with the chunks that hold it.
function pieces(length, chunks) {
  const cuts = new Set([0, length]);
  for (const [start, end] of chunks) {
    cuts.add(Math.max(0, Math.min(start, length)));
    cuts.add(Math.max(0, Math.min(end, length)));
  }
  const sorted = [...cuts].sort((a, b) => a - b);
  const found = [];
  for (let i = 0; i + 1 < sorted.length; i++) {
    const [start, end] = [sorted[i], sorted[i + 1]];
    const holders = [];
    chunks.forEach(([from, to], index) => {
      if (from <= start && end <= to) holders.push(index + 1);
    });
    found.push({ start, end, holders });
  }
  return found;
}

function role(holders) {
  if (holders.length === 0) return "gap";
  if (holders.length > 1) return "overlap";
  return holders[0] % 2 ? "odd" : "even";
}

function drawText(box, spec, points, view) {
  box.replaceChildren();
  const labelsAt = new Map();
  view.chunks.forEach(([start, end, tokens], index) => {
    const list = labelsAt.get(start) || [];
    list.push([index, start, end, tokens]);
    labelsAt.set(start, list);
  });
  for (const piece of pieces(points.length, view.chunks)) {
    for (const [index, start, end, tokens] of labelsAt.get(piece.start) || []) {
      const answer = index === view.answer_chunk ? ` · the answer's chunk, rank ${view.answer_rank}` : "";
      const label = element("span", {
        class: "explorer-label", "data-chunk": index + 1, "data-start": start, "data-end": end,
        style: spec.styles.label,
      }, `#${index + 1} [${start}, ${end}) ${tokens} token${tokens === 1 ? "" : "s"}${answer}`);
      box.append(label);
    }
    labelsAt.delete(piece.start);
    const kind = role(piece.holders);
    box.append(element("span", {
      class: `explorer-piece explorer-${kind}`, "data-start": piece.start, "data-end": piece.end,
      "data-chunks": piece.holders.join(" "), style: spec.styles[kind],
    }, points.slice(piece.start, piece.end).join("")));
  }
  for (const labels of labelsAt.values()) {  // empty chunks at the very end, or past it
    for (const [index, start, end, tokens] of labels) {
      box.append(element("span", { class: "explorer-label", "data-chunk": index + 1, "data-start": start,
                                   "data-end": end, style: spec.styles.label }, `#${index + 1} [${start}, ${end}) ${tokens} tokens`));
    }
  }
}

function drawHistogram(box, view) {
  box.replaceChildren();
  const { edges, counts, over } = view.histogram;
  const bars = counts.map((count, i) => [`${edges[i]}–${edges[i + 1]}`, count]);
  if (over) bars.push([`over ${edges[edges.length - 1]}`, over]);
  const highest = Math.max(1, ...bars.map(([, count]) => count));
  for (const [range, count] of bars) {
    const row = element("div", { class: "explorer-bar", "data-count": count, style: "display:flex;align-items:center;gap:4px" });
    row.append(
      element("span", { style: "width:6.5em;text-align:right;color:#555" }, range),
      element("span", { style: `display:inline-block;height:0.8em;background:#7a9cc6;width:${(count / highest) * 120}px` }),
      element("span", {}, String(count)),
    );
    box.append(row);
  }
}

function blocksLine(view) {
  const names = { code: "code blocks", table: "tables", list: "lists" };
  const parts = Object.keys(names).map((kind) => `${view.blocks_cut[kind]} of ${view.blocks[kind]} ${names[kind]}`);
  return parts.join(", ");
}

function drawStats(stats, view) {
  stats.message.textContent = view.message || "";
  stats.message.style.display = view.message ? "block" : "none";
  stats.count.textContent = String(view.chunks.length);
  stats.cut.textContent = blocksLine(view);
  stats.rank.textContent = view.message ? "–"
    : view.answer_rank === null ? "no chunk holds the whole answer"
    : `${view.answer_rank} of ${view.chunks.length} (chunk #${view.answer_chunk + 1})`;
  drawHistogram(stats.histogram, view);
}

function statRow(panel, title, className) {
  const row = element("div", { style: "margin:0 0 8px 0" });
  const value = element("div", { class: className, style: "font-weight:bold" });
  row.append(element("div", { style: "color:#555" }, title), value);
  panel.append(row);
  return value;
}

// anywidget's entry point: draw the explorer in `el` and follow the model.
function render({ model, el }) {
  const spec = model.get("spec");
  const points = Array.from(spec.page.text);
  let setting = { ...model.get("setting") };
  const root = element("div", { class: "explorer-body", "data-mode": spec.mode, style: "font-family:sans-serif;font-size:90%" });
  const controls = element("div", { class: "explorer-controls", style: "margin:4px 0 8px 0" });
  const choose = element("select", { class: "explorer-chunker", style: "margin-right:18px", ...OWN_KEYS });
  for (const name of spec.chunkers) choose.append(element("option", { value: name }, name));
  choose.value = setting.chunker;
  const change = (name, value) => {
    setting = { ...setting, [name]: value };
    model.set("setting", setting);
    model.save_changes();
  };
  choose.addEventListener("change", () => change("chunker", choose.value));
  controls.append(element("label", {}, "chunker "), choose,
                  slider("max_tokens", spec.controls.max_tokens, setting.max_tokens, (v) => change("max_tokens", v)),
                  slider("overlap", spec.controls.overlap, setting.overlap, (v) => change("overlap", v)));
  const question = element("div", { style: "margin-bottom:6px;color:#333" }, `The lab's question: ${spec.page.question}`);
  const layout = element("div", { style: "display:flex;gap:14px;align-items:flex-start" });
  const text = element("pre", { class: "explorer-text", style: spec.styles.text });
  const panel = element("div", { class: "explorer-stats", style: "flex:0 0 250px" });
  const stats = {
    message: element("div", { class: "explorer-message", style: "display:none;background:#fff3cd;padding:6px;margin-bottom:8px;border-radius:4px" }),
  };
  panel.append(stats.message);
  stats.count = statRow(panel, "chunks", "explorer-count");
  stats.cut = statRow(panel, "blocks no chunk holds whole", "explorer-cut");
  stats.rank = statRow(panel, "rank of the answer's chunk for the question", "explorer-rank");
  panel.append(element("div", { style: "color:#555" }, "tokens per chunk"));
  stats.histogram = element("div", { class: "explorer-histogram" });
  panel.append(stats.histogram);
  layout.append(text, panel);
  root.append(controls, question, layout);
  const draw = () => {
    const view = model.get("view");
    drawStats(stats, view);
    drawText(text, spec, points, view);
    root.setAttribute("data-setting", `${view.chunker}|${view.max_tokens}|${view.overlap}`);
  };
  model.on("change:view", draw);
  draw();
  el.replaceChildren(root);
}

// With no kernel: a model answering from the grid computed ahead, as the widget's would.
function gridModel(data) {
  const values = { spec: data.spec, setting: data.setting, view: data.views[data.first] };
  const listeners = [];
  return {
    get: (name) => values[name],
    set(name, value) {
      values[name] = value;
      if (name !== "setting") return;
      const key = `${value.chunker}|${value.max_tokens}|${value.overlap}`;
      values.view = data.views[key] || { ...values.view, chunks: [], message: `no setting ${key} was computed` };
    },
    save_changes: () => listeners.forEach((listener) => listener()),
    on: (event, listener) => { if (event === "change:view") listeners.push(listener); },
  };
}

function mountStatic(el) {
  const data = JSON.parse(el.querySelector("script.explorer-data").textContent);
  const host = el.querySelector(".explorer-host");
  render({ model: gridModel(data), el: host });
}
