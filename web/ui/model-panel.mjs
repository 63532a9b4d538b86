// model-panel.mjs: the inputs from outside the generators (docs/model.md): a real model (llama2.c files or
// a Hugging Face folder, docs/hf.md; read and run in the background worker, which sends the capture of every layer's and head's Q, K, V for
// the text) and the reader's own Q, K, V (web/io/own-inputs.mjs, read on this thread). Either becomes every
// engine's inputs, which requests name; this panel owns the two boxes and what they loaded.
import { ownTensors } from '../io/own-inputs.mjs';
import { noticeText, said as saidIn } from '../state/notice.mjs';
import { folderFiles } from '../wasm/model.mjs';
import { fmtMs } from '../render/format.mjs';
import { MSG } from '../workers/protocol.mjs';
import { NOTHING } from './panel.mjs';
import { t as tr } from '../i18n/i18n.mjs'; // `t` names the tensors here

/**
 * The panel for `page` (main.mjs's context). Besides the Panel: tensors(s), pieces(), ids(), label(all),
 * fit(s), switchSource(prev, next), leaving(prev, next), busy(), own(), routes (the background worker's
 * answers it takes) and backgroundFailed(what, sentence).
 */
export function mountModelPanel(page) {
  const $ = (id) => document.getElementById(id);
  const model = { config: null, tensors: null, ids: null, pieces: null, ms: 0, busy: false, loadId: 0, loaded: 0, runId: 0, error: null, synthetic: null, reading: false };
  const own = { tensors: null, names: null, seq: 0 };
  let timer = 0;

  /** The tensors the state's source shows: a model's capture, the reader's own, or none (the generators). */
  const tensors = (s) => (s.src === 'model' ? model.tensors : s.src === 'file' ? own.tensors : null);
  /** The token pieces of the inputs shown: a model's text, or the tokens.json beside own Q, K, V; else null. */
  const pieces = () => (page.st.src === 'model' ? (model.tensors ? model.pieces : null) : page.st.src === 'file' ? own.tensors?.pieces ?? null : null);

  /**
   * What a figure's caption says of loaded inputs; null for the generators. `all`: of every head (no layer, head
   * named). `lang`: the page's unless asked (an export's README is English in every language).
   */
  function label(all = false, lang = undefined) {
    const st = page.st, t = tensors(st);
    if (!t) return null;
    const c = model.config;
    // the overview's caption names the text itself (ui/overview.mjs tokensText): once is enough
    // the text without its BOS (llama2.c's always; a folder's when its tokenizer adds one)
    // (own Q, K, V have no model: model.config is null then)
    const hf = c?.format === 'hf', first = hf && model.ids?.[0] !== c.bos ? 0 : 1;
    const what = st.src === 'model' ? tr(`${all ? 'model.caption' : 'model.captionOn'}${hf ? 'HF' : ''}`, { layers: c.layers, dim: c.dim, n: t.n, architecture: c.architecture, text: (model.pieces ?? []).slice(first, first + 6).join('').trim() }, lang)
      : (own.names ?? []).join(tr('own.namesJoin', null, lang));
    return !all && (t.layers > 1 || t.heads > 1) ? tr('model.where', { layer: st.layer, head: st.head, what }, lang) : what;
  }

  /** The state as the loaded tensors shape it: n and d theirs, layer and head within their ranges. */
  function fit(s) {
    const t = tensors(s);
    if (!t) return s;
    // normalise again: knobs bounded by n (Linformer's s, Nyström's landmarks) follow the text's length
    return page.schema.normalise({ ...s, n: t.n, d: t.d, layer: Math.min(Math.max(0, s.layer), t.layers - 1), head: Math.min(Math.max(0, s.head), t.heads - 1) });
  }

  /** Entering model mode keeps the generators' n and d to return to; leaving it gives them back. */
  function switchSource(prev, next) {
    if (prev.src === 'synthetic' && next.src !== 'synthetic') model.synthetic = { n: prev.n, d: prev.d };
    if (prev.src !== 'synthetic' && next.src === 'synthetic' && model.synthetic) return { ...next, ...model.synthetic };
    return next;
  }

  /** The model's status line: a catalogue sentence, or a message as it came (a worker's error). */
  function status(key, params = null, bad = false) { say('model', key, params, bad); }

  /** The status lines' sentences, kept to be written again in another language (sync). */
  const said = { model: null, qkv: null };
  let shownLang = null;
  /** Say in #ID-status `key` (a catalogue key, with `params`; or a function giving the sentence), again in the next language; `bad`: as a warning. */
  function say(id, key, params = null, bad = false) {
    said[id] = { key, params };
    const el = $(`${id}-status`);
    el.textContent = typeof key === 'function' ? key() : tr(key, params);
    el.classList.toggle('warn', bad);
  }

  /** Beside a file picker's button, what it holds: the file's name, how many, or none (the browser's own words are hidden). */
  function chosen(id) {
    const files = $(id).files ?? [];
    document.querySelector(`[data-files="${id}"]`).textContent = files.length === 1 ? files[0].name : files.length ? tr('model.fileCount', { count: files.length }) : tr('model.noFile');
  }

  /** Beside the pickers, a chosen folder's name (its files' common first path part) and how many files it holds. */
  function chosenFolder(files) {
    const first = files[0]?.webkitRelativePath?.split('/')[0];
    document.querySelector('[data-files="model-files"]').textContent = first ? `${first}/ (${tr('model.fileCount', { count: files.length })})` : tr('model.noFile');
  }

  /** The model box: shown in model mode; the text area once a model is read. The own-files box likewise. */
  function sync(st) {
    if (shownLang !== st.lang) { // the sentences in the status lines, the text area's placeholder
      shownLang = st.lang;
      for (const [id, s] of Object.entries(said)) if (s) $(`${id}-status`).textContent = typeof s.key === 'function' ? s.key() : tr(s.key, s.params);
      $('model-text').placeholder = tr('model.placeholder');
      for (const id of ['model-files', 'qkv-files']) chosen(id);
    }
    const box0 = $('qkv-box'), file = st.src === 'file';
    if (box0.hidden === file) box0.hidden = !file;
    if (file && !own.tensors && !$('qkv-status').textContent) say('qkv', 'own.hint');
    // 2-D inputs have one layer and one head: no pickers for them (controls.sync showed them by the state)
    const t = tensors(st);
    if (t && t.layers === 1 && t.heads === 1) for (const k of ['layer', 'head']) document.querySelector(`[data-knob="${k}"]`).hidden = true;
    const box = $('model-box'), on = st.src === 'model';
    if (box.hidden === on) box.hidden = !on;
    const ta = $('model-text'), ready = !!model.config;
    if (ta.hidden === ready) ta.hidden = !ready;
    ta.disabled = !ready || !!st.lock;
    if (on && !ready && !model.busy && !model.error) {
      status('model.hint');
    }
  }

  /**
   * Load the files as the model: a Hugging Face folder (config.json or a .safetensors among them: the File
   * objects go to the worker, which reads them chunk by chunk), else llama2.c's two files (any order: the
   * worker tells them apart by content).
   */
  async function loadModelFiles(fileList) {
    const files = [...fileList];
    const hf = folderFiles(files);
    if (hf.isFolder) { loadFolder(hf); return; }
    if (files.length !== 2) { page.notice.show(tr('model.twoFiles', { count: files.length }), 'model'); return; }
    let buffers;
    try {
      buffers = await Promise.all(files.map((f) => f.arrayBuffer()));
    } catch (err) {
      page.notice.show(tr('model.unreadable', { message: err.message }), 'model');
      return;
    }
    const w = page.lab.background();
    model.busy = true;
    status('model.reading', { first: files[0].name, second: files[1].name });
    w.postMessage({ kind: MSG.MODEL_LOAD, id: ++model.loadId, files: buffers }, buffers);
  }

  /** A Hugging Face folder's files to the background worker, which reports its reading (MODEL_PROGRESS). */
  function loadFolder(hf) {
    const w = page.lab.background();
    model.busy = true;
    const id = ++model.loadId;
    progress.show({ cancel: () => { w.postMessage({ kind: MSG.MODEL_CANCEL, id }); } });
    status('model.preparing');
    const folder = { config: hf.config, index: hf.index, shards: hf.shards, tokenizer: hf.tokenizer };
    w.postMessage({ kind: MSG.MODEL_LOAD, id, folder });
  }

  /**
   * The progress bar under the pickers: a folder's reading (bytes read of the shards' total, with Cancel),
   * then the forward pass, one call in the worker: its elapsed time, against an estimate from the last pass
   * when there is one (the bar stops at 95 % of it), else an indeterminate bar.
   */
  const FORWARD_BAR_MS = 250;
  const progress = (() => {
    let tick = 0, t0 = 0, forward = null, cancelFn = null, later = 0;
    const row = () => $('model-progress-row'), bar = () => $('model-progress'), cancel = () => $('model-cancel');
    const stopTick = () => { clearInterval(tick); tick = 0; clearTimeout(later); later = 0; };
    cancel().addEventListener('click', () => { cancelFn?.(); cancelFn = null; cancel().disabled = true; });
    const drawForward = () => {
      const el = (performance.now() - t0) / 1000, est = forward.estimateMs;
      if (est) bar().value = Math.min(0.95, (el * 1000) / est); else bar().removeAttribute('value');
      status(est ? 'model.forwardEst' : 'model.forward', { n: forward.n, elapsed: el.toFixed(1), estimate: (est / 1000).toFixed(1) });
    };
    return {
      show({ cancel: fn = null } = {}) {
        stopTick();
        forward = null;
        cancelFn = fn;
        row().hidden = false;
        bar().value = 0;
        cancel().hidden = !fn;
        cancel().disabled = false;
      },
      reading({ done, total, file }) {
        bar().value = total ? done / total : 1;
        const mb = (b) => (b / 2 ** 20).toFixed(b < 10 * 2 ** 20 ? 1 : 0);
        status(done >= total ? 'model.binding' : 'model.readingFolder', { file, done: mb(done), total: mb(total) });
      },
      forward(p) {
        stopTick();
        t0 = performance.now();
        // a pass of a few milliseconds (llama2.c's stories260K, a tiny folder) shows no bar: only one still
        // running after FORWARD_BAR_MS does
        later = setTimeout(() => {
          this.show();
          forward = p;
          drawForward();
          tick = setInterval(drawForward, 200);
        }, FORWARD_BAR_MS);
      },
      hide() { stopTick(); forward = null; cancelFn = null; row().hidden = true; },
    };
  })();

  function onProgress(m) {
    if (m.stage === 'reading') { if (m.id === model.loadId) progress.reading(m); return; }
    if (m.stage === 'forward' && m.id === model.runId) progress.forward(m);
  }

  /** The reader's own Q, K, V files: checked here (web/io/own-inputs.mjs), then every engine's inputs. */
  async function loadOwnFiles(fileList) {
    let files;
    try {
      files = await Promise.all([...fileList].map(async (f) => ({ name: f.name, bytes: new Uint8Array(await f.arrayBuffer()) })));
    } catch (err) {
      page.notice.show(tr('own.unreadable', { message: err.message }), 'qkv');
      return;
    }
    const got = ownTensors(files, page.av);
    if (got.error) {
      // the inputs already loaded and the view stay
      page.notice.show(tr('own.error', { error: got.error }), 'qkv');
      say('qkv', () => noticeText(got.error).text, null, true);
      return;
    }
    page.notice.clear('qkv');
    if (got.notice) page.notice.show(tr('own.error', { error: got.notice }), 'qkv'); // the tensors load, without tokens
    const t = { ...got.tensors, key: `own-${++own.seq}` };
    own.tensors = t;
    own.names = files.map((f) => f.name);
    const names = own.names, withTokens = !!t.pieces;
    say('qkv', () => {
      const loaded = tr(t.layers > 1 || t.heads > 1 ? 'own.loadedHeads' : 'own.loaded', { names: names.join(tr('own.namesJoin')), n: t.n, d: t.d, layers: t.layers, heads: t.heads, kv: t.kvHeads });
      return withTokens ? tr('own.withTokens', { loaded }) : loaded;
    });
    page.lab.sendTensors(t, { background: true });
    if (page.st.src !== 'file') page.st = switchSource(page.st, { ...page.st, src: 'file' });
    // the gated families' own gates (gates.npy, betas.npy) are what they read from now on; without them, what was
    if (t.gates?.g) page.st = { ...page.st, gate: 'file' };
    else if (page.st.gate === 'file') page.st = { ...page.st, gate: 'constant' };
    if (t.gates?.beta) page.st = { ...page.st, beta_gen: 'file' };
    else if (page.st.beta_gen === 'file') page.st = { ...page.st, beta_gen: 'constant' };
    if (t.gates?.a) page.st = { ...page.st, dplr_ab: 'file' };
    else if (page.st.dplr_ab === 'file') page.st = { ...page.st, dplr_ab: 'zero' };
    page.st = fit(page.st);
    page.recompute();
  }

  /** Run the forward pass on the text (debounced while typing). */
  function run(delay = 0) {
    clearTimeout(timer);
    model.busy = true;
    // the id is taken now: a result for an older text, still in flight, is dropped, and the page stays
    // busy (snapshot() waits) until this text's forward pass is in
    const id = ++model.runId;
    timer = setTimeout(() => {
      timer = 0;
      page.lab.background().postMessage({ kind: MSG.MODEL_RUN, id, text: $('model-text').value, key: `model-${id}` });
    }, delay);
  }

  function onMessage(m) {
    if (m.id !== (m.kind === MSG.MODEL_LOADED ? model.loadId : model.runId)) return; // a newer file or text is under way
    progress.hide();
    if (m.cancelled) {
      // the model already loaded (if any) and the view stay
      model.busy = false;
      status('model.cancelled');
      page.inspector.notify();
      return;
    }
    if (m.error) {
      // the current view and any model already loaded stay; the page says what was wrong
      model.busy = false;
      model.error = m.error;
      page.notice.show(tr(m.kind === MSG.MODEL_LOADED ? 'model.filesError' : 'model.error', { error: saidIn(m.error) }), 'model');
      status(() => saidIn(m.error), null, true);
      page.inspector.notify();
      return;
    }
    model.error = null;
    page.notice.clear('model');
    if (m.kind === MSG.MODEL_LOADED) {
      const first = !model.config;
      model.config = m.config;
      model.loaded += 1; // another model: what was computed with the old one's weights (a distilled W) is not its

      const c = m.config;
      if (c.format === 'hf') {
        const kind = { 'byte-level BPE': 'model.tokenizer.byteLevel', 'BPE with byte fallback': 'model.tokenizer.byteFallback' }[c.tokenizer] ?? 'model.tokenizer.bpe';
        status(() => tr('model.configHF', { architecture: c.architecture, layers: c.layers, heads: c.heads, kv: c.kvHeads, size: c.headSize, dtype: c.dtype,
          size_mb: mbText(c.bytes), tokenizer: tr(kind), vocab: c.vocab, seq: c.seqLen, context: c.context, limit: c.limit }));
      } else status('model.config', { layers: c.layers, heads: c.heads, kv: c.kvHeads, size: c.headSize, vocab: c.vocab, seq: c.seqLen });
      const ta = $('model-text');
      if (!ta.value) ta.value = 'Once upon a time, there was a little dog named Max. Max liked to run in the park.';
      if (first && page.st.src === 'model') { page.st = { ...page.st, causal: true }; page.redraw.controls = true; } // the model's own mask
      sync(page.st);
      run(0);
      return;
    }
    // model-ran: the capture becomes every engine's inputs
    const t = m.tensors;
    model.tensors = t;
    model.ids = m.ids;
    model.pieces = m.pieces;
    model.ms = m.ms;
    page.lab.sendTensors(t, { background: false });
    const c = model.config;
    if (c.format === 'hf') {
      // what was loaded stays said: the architecture, dtype, size and tokenizer beside the pass
      const kind = { 'byte-level BPE': 'model.tokenizer.byteLevel', 'BPE with byte fallback': 'model.tokenizer.byteFallback' }[c.tokenizer] ?? 'model.tokenizer.bpe';
      status(() => tr('model.ranHF', { n: t.n, seq: c.seqLen, ms: fmtMs(m.ms), architecture: c.architecture, layers: c.layers, heads: c.heads, kv: c.kvHeads,
        size: c.headSize, dtype: c.dtype, size_mb: mbText(c.bytes), tokenizer: tr(kind) }));
    } else status('model.ran', { n: t.n, ms: fmtMs(m.ms), layers: c.layers, heads: c.heads, size: c.headSize });
    model.busy = false;
    if (page.st.src === 'model') {
      page.st = fit(page.st);
      page.recompute();
    }
    page.inspector.notify();
  }

  // the file inputs, files dropped anywhere on the page, the text
  $('model-files').addEventListener('change', (e) => { chosen('model-files'); if (e.target.files.length) loadModelFiles(e.target.files); });
  $('model-folder').addEventListener('change', (e) => { chosenFolder(e.target.files); if (e.target.files.length) loadModelFiles(e.target.files); });
  $('qkv-files').addEventListener('change', (e) => { chosen('qkv-files'); if (e.target.files.length) loadOwnFiles(e.target.files); });
  addEventListener('dragover', (e) => { if ([...(e.dataTransfer?.types ?? [])].includes('Files')) e.preventDefault(); });
  addEventListener('drop', async (e) => {
    if (!e.dataTransfer?.files?.length) return;
    e.preventDefault();
    // a dropped folder is one entry: its files are walked (a Hugging Face folder dropped whole)
    const files = await droppedFiles(e.dataTransfer);
    // .npy and .json files are the reader's own Q, K, V (unless they make a model folder: config.json,
    // tokenizer.json); anything else a model's files
    const ownFiles = files.every((f) => /\.(npy|json)$/i.test(f.name)) && !folderFiles(files).isFolder;
    if (ownFiles) { loadOwnFiles(files); return; }
    if (page.st.src !== 'model') page.onChange('src', 'model', 'change');
    loadModelFiles(files);
  });
  $('model-text').addEventListener('input', () => run(250));

  return {
    ...NOTHING,
    name: 'model',
    sync,
    tensors, pieces, label, fit, switchSource,
    ids: () => (page.st.src === 'model' && model.tensors ? model.ids : null),
    modelPieces: () => (page.st.src === 'model' && model.tensors ? model.pieces : null),
    /** A link or a host leaves the generators: remember their n and d to return to. */
    leaving(prev, next) { if (prev.src === 'synthetic' && next.src !== 'synthetic') model.synthetic = { n: prev.n, d: prev.d }; },
    busy: () => model.busy,
    /** The loaded model's configuration (web/wasm/model.mjs: format, architecture, sizes, bos), or null. */
    config: () => model.config,
    /** Which model is loaded: a count of the loads that succeeded (0: none). */
    loaded: () => model.loaded,
    own: () => own.tensors,
    all: () => [own.tensors, model.tensors],
    routes: { [MSG.MODEL_LOADED]: onMessage, [MSG.MODEL_RAN]: onMessage, [MSG.MODEL_PROGRESS]: onProgress },
    /** What the snapshot says of the loaded model (docs/inspection.md `model`), or null. */
    snapshot: () => (model.config ? modelSnapshot(model.config) : null),
    /** The background worker failed: a load or run in flight is taken as failed (a text waiting for its debounce is posted later). */
    backgroundFailed(what, sentence) {
      if (model.busy && !timer) {
        progress.hide();
        model.busy = false;
        model.error = what;
        status(() => sentence, null, true);
      }
    },
  };
}

/** The snapshot's `model` (docs/inspection.md): the loaded model's format and sizes, in the CLI's words. */
export function modelSnapshot(c) {
  return {
    format: c.format, architecture: c.architecture, model_type: c.modelType, dtype: c.dtype, layers: c.layers, heads: c.heads,
    kv_heads: c.kvHeads, head_size: c.headSize, dim: c.dim, vocab: c.vocab, seq_len: c.seqLen, context: c.context,
    bytes: c.bytes, tokenizer: c.tokenizer,
  };
}

/** The files of a drop: a dropped folder's (walked, at any depth) and the loose files, as File objects. */
async function droppedFiles(dt) {
  const entries = [...(dt.items ?? [])].map((it) => it.webkitGetAsEntry?.()).filter(Boolean);
  if (!entries.some((en) => en.isDirectory)) return [...dt.files];
  const out = [];
  const walk = async (en) => {
    if (en.isFile) { out.push(await new Promise((res, rej) => en.file(res, rej))); return; }
    const reader = en.createReader();
    for (;;) { // readEntries gives a batch at a time, an empty one at the end
      const batch = await new Promise((res, rej) => reader.readEntries(res, rej));
      if (!batch.length) break;
      for (const x of batch) await walk(x);
    }
  };
  for (const en of entries) await walk(en);
  return out;
}

/** A model's size in MB: two decimals below 1 MB, one below 10 MB (a tiny test model is 0.05 MB, not 1). */
const mbText = (b) => `${(b / 2 ** 20).toFixed(b < 2 ** 20 ? 2 : b < 10 * 2 ** 20 ? 1 : 0)} MB`;
