// gpuvalue in the browser: the page around the wasm exports of gpuvalue.js (wasm-bindgen
// --target web). The probes, the results file, the table, the roofline and the ranking all
// come from the Rust library; this file only wires them to the page.
//
// Contract for scripts and CI: <pre id="gpuvalue-results" data-state="idle|running|done|failed">.
// When the suite ends, the final results JSON goes into its textContent and data-state becomes
// "done" (after everything else is drawn). On a rejection or an uncaught error it becomes
// "failed" with {"error": message, "last": last snapshot or null}.
//
// Query parameters: ?suite=ci selects the CI suite (tiny sizes); autostart=1 runs at load.

const STORAGE_KEY = 'gpuvalue.stated_gpu';
// What the page calls in gpuvalue.js (src/web/mod.rs).
const EXPORTS = [
  'adapter_info', 'catalog_gpus', 'run_suite', 'results_table', 'roofline_svg', 'standing',
  'request_stop',
];
const $ = (id) => document.getElementById(id);

const params = new URLSearchParams(location.search);
const out = $('gpuvalue-results');

let wasm = null;
let running = false;
// True from run_suite's call until its promise settles (even after the run was marked
// failed): a second suite must not start beside a first that is still going.
let inFlight = false;
let lastSnapshot = null;
let lastConsoleError = null;
let downloadUrl = null;

// A panic hook on the Rust side reports through console.error; remember the last message so a
// failure can say more than "unreachable".
const consoleError = console.error.bind(console);
console.error = (...args) => {
  lastConsoleError = args.map(String).join(' ');
  consoleError(...args);
};

function message(e) {
  if (typeof e === 'string') return e;
  if (e && typeof e.message === 'string') return e.message;
  try {
    return JSON.stringify(e);
  } catch {
    return String(e);
  }
}

function setState(state, text) {
  if (text !== undefined) out.textContent = text;
  out.dataset.state = state;
}

function showError(text) {
  const el = $('error');
  el.textContent = text;
  el.hidden = false;
}

function fail(text) {
  running = false;
  let last = null;
  if (lastSnapshot !== null) {
    try {
      last = JSON.parse(lastSnapshot);
    } catch {
      last = lastSnapshot;
    }
  }
  const full = lastConsoleError && !text.includes(lastConsoleError)
    ? `${text} (last console error: ${lastConsoleError})`
    : text;
  showError(`The run failed: ${full}`);
  $('progress-label').textContent = wasm === null
    ? 'Failed; reload the page to run again.'
    : 'Failed.';
  $('run').disabled = wasm === null || inFlight;
  $('stop').disabled = true;
  setState('failed', JSON.stringify({ error: full, last }));
}

// A panic in a callback (a map_async completion, say) does not reject run_suite's promise;
// catch it here so the page and CI learn of it instead of waiting.
// A panic aborts the wasm instance (panic = "abort"): it cannot run again without a reload.
window.addEventListener('error', (ev) => {
  if (!running) return;
  wasm = null;
  fail(message(ev.error ?? ev.message));
});
window.addEventListener('unhandledrejection', (ev) => {
  if (!running) return;
  wasm = null;
  fail(message(ev.reason));
});

// ---- adapter -------------------------------------------------------------------------------

const norm = (s) => String(s).toLowerCase().replace(/[^a-z0-9]/g, '');

function formatLimit(key, value) {
  if (typeof value === 'number' && /size$/.test(key) && value >= 1024) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = value;
    let u = 0;
    while (v >= 1024 && u < units.length - 1) {
      v /= 1024;
      u += 1;
    }
    const shown = Number.isInteger(v) ? String(v) : v.toFixed(1);
    return `${shown} ${units[u]} (${value.toLocaleString('en')} bytes)`;
  }
  return typeof value === 'number' ? value.toLocaleString('en') : String(value);
}

function addFact(dl, term, value) {
  const dt = document.createElement('dt');
  dt.textContent = term;
  const dd = document.createElement('dd');
  dd.textContent = value;
  dl.append(dt, dd);
}

// What the browser (or wgpu's web backend) does not give the probes, in words: the wasm
// side's list (`lacks`, also recorded in the results file), plus what only the page knows.
function lacks(info) {
  const wgsl = new Set((info.wgsl_features ?? []).map(norm));
  const out = [...(info.lacks ?? [])];
  if (!wgsl.has('packed4x8integerdotproduct')) {
    out.push('No packed_4x8_integer_dot_product in WGSL: the int8 figure is unsupported.');
  }
  if (!self.crossOriginIsolated) {
    out.push('Not cross-origin isolated: the browser coarsens performance.now() (serve the page with COOP/COEP headers for 5 µs).');
  }
  if (info.software) {
    out.push('This is a software adapter (no GPU): the figures measure the CPU.');
  }
  return out;
}

function showAdapter(info) {
  const dl = $('adapter');
  dl.replaceChildren();
  addFact(dl, 'Name', info.name || '(hidden by the browser)');
  addFact(dl, 'Vendor', info.vendor || '(hidden by the browser)');
  addFact(dl, 'Backend', info.backend ?? 'webgpu');
  addFact(dl, 'Software adapter', info.software ? 'yes' : 'no');
  for (const [k, v] of Object.entries(info.limits ?? {})) {
    addFact(dl, k.replace(/_/g, ' '), formatLimit(k, v));
  }
  dl.hidden = false;

  const ul = $('lacks');
  ul.replaceChildren(...lacks(info).map((t) => {
    const li = document.createElement('li');
    li.textContent = t;
    return li;
  }));
  $('lacks-box').hidden = false;

  $('features').textContent = (info.features ?? []).join(', ') || '(none)';
  $('wgsl-features').textContent = (info.wgsl_features ?? []).join(', ') || '(none)';
  $('features-box').hidden = false;
}

// ---- GPU picker ----------------------------------------------------------------------------

function storedGpu() {
  try {
    return localStorage.getItem(STORAGE_KEY) ?? '';
  } catch {
    return '';
  }
}

function fillCatalog(gpus) {
  const select = $('gpu');
  const byVendor = new Map();
  for (const g of gpus) {
    const v = g.vendor || 'Other';
    if (!byVendor.has(v)) byVendor.set(v, []);
    byVendor.get(v).push(g);
  }
  for (const [vendor, list] of byVendor) {
    const group = document.createElement('optgroup');
    group.label = vendor;
    for (const g of list) {
      const o = document.createElement('option');
      o.value = g.id;
      o.textContent = g.name;
      group.append(o);
    }
    select.append(group);
  }
  const saved = storedGpu();
  if (saved && gpus.some((g) => g.id === saved)) select.value = saved;
  select.disabled = false;
  select.addEventListener('change', () => {
    try {
      if (select.value) localStorage.setItem(STORAGE_KEY, select.value);
      else localStorage.removeItem(STORAGE_KEY);
    } catch {
      // Storage can be off (private windows, policies); the choice still applies to this run.
    }
  });
}

// ---- results -------------------------------------------------------------------------------

function showTable(json) {
  $('table').innerHTML = wasm.results_table(json);
  $('results-empty').hidden = true;
}

function sectionError(id, what, e) {
  const p = document.createElement('p');
  p.className = 'error';
  p.textContent = `Could not draw the ${what}: ${message(e)}`;
  $(id).replaceChildren(p);
}

function showStanding(json) {
  const list = JSON.parse(wasm.standing(json));
  const ol = $('standing');
  ol.replaceChildren(...list.map((s) => {
    const li = document.createElement('li');
    const h = document.createElement('h3');
    h.textContent = s.title || s.scenario;
    li.append(h);
    if (s.place != null && s.of != null) {
      const p = document.createElement('p');
      p.className = 'place';
      p.textContent = `place ${s.place} of ${s.of} (the ranked instances and this machine)`;
      li.append(p);
    }
    if (s.line) {
      const p = document.createElement('p');
      p.textContent = s.line;
      li.append(p);
    }
    return li;
  }));
  $('standing-empty').hidden = list.length > 0;
  if (list.length === 0) $('standing-empty').textContent = 'No scenario could be ranked from these results.';
}

function fileStamp(d) {
  // UTC, like the CLI's file names: YYYYMMDDTHHMMSS.
  return d.toISOString().replace(/[-:]/g, '').slice(0, 15);
}

function offerDownload(json) {
  if (downloadUrl) URL.revokeObjectURL(downloadUrl);
  downloadUrl = URL.createObjectURL(new Blob([json], { type: 'application/json' }));
  const a = $('download');
  a.href = downloadUrl;
  a.download = `gpuvalue-browser-${fileStamp(new Date())}.json`;
  a.textContent = `Download the results file (${a.download})`;
  a.hidden = false;
}

function showFinal(json) {
  // Each view on its own: one that cannot be drawn says so and leaves the others.
  try {
    showTable(json);
  } catch (e) {
    sectionError('table', 'table', e);
  }
  try {
    $('roofline').innerHTML = wasm.roofline_svg(json);
    $('roofline-empty').hidden = true;
  } catch (e) {
    sectionError('roofline', 'roofline', e);
  }
  try {
    showStanding(json);
  } catch (e) {
    $('standing-empty').hidden = true;
    sectionError('standing', 'standing', e);
  }
  offerDownload(json);
}

// ---- run -----------------------------------------------------------------------------------

function onProgress(label, done, total) {
  if (!running) return;
  const bar = $('progress-bar');
  bar.max = total > 0 ? total : 1;
  bar.value = Math.min(done, bar.max);
  $('progress-label').textContent = total > 0 ? `${label} (${done} of ${total})` : String(label);
}

function onResult(snapshot) {
  if (!running) return;
  lastSnapshot = snapshot;
  try {
    showTable(snapshot);
  } catch (e) {
    consoleError('results_table failed on a snapshot:', e);
  }
}

async function run() {
  if (running || inFlight || wasm === null) return;
  running = true;
  lastSnapshot = null;
  lastConsoleError = null;
  $('error').hidden = true;
  $('run').disabled = true;
  $('stop').disabled = false;
  $('download').hidden = true;
  $('progress-bar').removeAttribute('value');
  $('progress-label').textContent = 'Starting…';
  setState('running', '');
  const options = {
    suite: $('suite').value,
    stated_gpu: $('gpu').value || null,
    user_agent: navigator.userAgent,
    // What the browser says about the host (no CPU model: browsers do not expose it).
    platform: navigator.userAgentData?.platform || navigator.platform || '',
    hardware_concurrency: navigator.hardwareConcurrency || 0,
    cross_origin_isolated: self.crossOriginIsolated === true,
  };
  const started = performance.now();
  let final;
  inFlight = true;
  try {
    final = await wasm.run_suite(JSON.stringify(options), onProgress, onResult);
  } catch (e) {
    inFlight = false;
    if (running) fail(message(e));
    else $('run').disabled = wasm === null;
    return;
  }
  inFlight = false;
  if (!running) $('run').disabled = wasm === null;
  if (!running) return; // an uncaught error already failed the run
  showFinal(final);
  running = false;
  const secs = ((performance.now() - started) / 1000).toFixed(1);
  const bar = $('progress-bar');
  bar.max = 1;
  bar.value = 1;
  let interrupted = false;
  try {
    interrupted = JSON.parse(final).interrupted === true;
  } catch {
    // The views above said what they could not read.
  }
  $('progress-label').textContent = interrupted
    ? `Stopped after ${secs} s: the results so far are below (the file says interrupted).`
    : `Done in ${secs} s.`;
  $('run').disabled = false;
  $('stop').disabled = true;
  setState('done', final);
}

function stop() {
  if (!running || wasm === null) return;
  wasm.request_stop();
  $('stop').disabled = true;
  $('progress-label').textContent = 'Stopping after the current measurement…';
}

// ---- start ---------------------------------------------------------------------------------

async function start() {
  const suite = params.get('suite');
  if (suite === 'quick' || suite === 'ci') $('suite').value = suite;
  const autostart = params.get('autostart') === '1';

  try {
    wasm = await import('./gpuvalue.js');
    await wasm.default();
    const missing = EXPORTS.filter((name) => typeof wasm[name] !== 'function');
    if (missing.length > 0) throw new Error(`gpuvalue.js lacks the exports ${missing.join(', ')}`);
  } catch (e) {
    wasm = null;
    $('adapter-status').textContent = 'The page could not load its WebAssembly module.';
    fail(`loading gpuvalue.js: ${message(e)}`);
    return;
  }

  try {
    fillCatalog(JSON.parse(wasm.catalog_gpus()));
  } catch (e) {
    showError(`The GPU catalog could not be read: ${message(e)}`);
  }

  let info;
  try {
    info = JSON.parse(await wasm.adapter_info());
  } catch (e) {
    const why = message(e);
    const status = $('adapter-status');
    status.textContent = `No WebGPU adapter: ${why}. This page needs a browser with WebGPU enabled.`;
    status.classList.add('error');
    if (autostart) fail(`no WebGPU adapter: ${why}`);
    return;
  }
  $('adapter-status').textContent = info.software
    ? 'A WebGPU adapter is available (a software one).'
    : 'A WebGPU adapter is available.';
  showAdapter(info);

  $('run').disabled = false;
  $('run').addEventListener('click', run);
  $('stop').addEventListener('click', stop);
  if (autostart) run();
}

start();
