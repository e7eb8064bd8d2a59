// benchdb's page script: loads onnxruntime-web, runs one model, times batches of calls.
// Python (benchdb.backends.ortweb) drives it through playwright; the stopping rule stays in
// Python (benchdb.harness.timing), which receives one in-page timing per batch.

let ort = null;
let session = null;
let feeds = null;

// A module with one v128 instruction: validates only where WebAssembly SIMD is enabled.
const SIMD_PROBE = new Uint8Array([0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10,
  1, 8, 0, 65, 0, 253, 15, 253, 98, 11]);

const TYPED = {
  float32: Float32Array, float64: Float64Array, int64: BigInt64Array, int32: Int32Array,
  bool: Uint8Array, uint8: Uint8Array, int8: Int8Array, float16: Uint16Array,
};

function fromB64(b64, dtype) {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const T = TYPED[dtype];
  if (!T) throw new Error(`input dtype ${dtype} is not supported by benchdb's page`);
  return new T(bytes.buffer);
}

function toB64(typed) {
  const bytes = new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

// Smallest non-zero step of performance.now() (Chromium coarsens it, e.g. to 5 us).
function timerResolution() {
  let best = Infinity;
  for (let k = 0; k < 200; k++) {
    const a = performance.now();
    let b = a;
    while (b === a) b = performance.now();
    best = Math.min(best, b - a);
  }
  return best / 1000;
}

async function environment() {
  const env = {
    userAgent: navigator.userAgent, crossOriginIsolated: self.crossOriginIsolated,
    sharedArrayBuffer: typeof SharedArrayBuffer !== 'undefined',
    hardwareConcurrency: navigator.hardwareConcurrency, simd: WebAssembly.validate(SIMD_PROBE),
    timerResolution: timerResolution(), webgpu: null, webnn: null,
  };
  if (navigator.userAgentData && navigator.userAgentData.getHighEntropyValues) {
    const ua = await navigator.userAgentData.getHighEntropyValues(['fullVersionList']);
    env.brands = ua.fullVersionList;
  }
  if (navigator.gpu) {
    try {
      const adapter = await navigator.gpu.requestAdapter();
      if (adapter) {
        const info = adapter.info || {};
        env.webgpu = { vendor: info.vendor || '', architecture: info.architecture || '', device: info.device || '',
          description: info.description || '', isFallbackAdapter: Boolean(adapter.isFallbackAdapter ?? info.isFallbackAdapter) };
      } else {
        env.webgpu = { error: 'navigator.gpu.requestAdapter() returned null: no WebGPU adapter' };
      }
    } catch (e) {
      env.webgpu = { error: `requestAdapter failed: ${e.message || e}` };
    }
  } else {
    env.webgpu = { error: 'navigator.gpu is absent (WebGPU disabled in this browser)' };
  }
  if (navigator.ml && navigator.ml.createContext) {
    try {
      await navigator.ml.createContext({ deviceType: 'cpu' });
      env.webnn = { ok: true };
    } catch (e) {
      env.webnn = { error: `navigator.ml.createContext: ${e.name || 'Error'}: ${e.message || e}` };
    }
  } else {
    env.webnn = { error: 'navigator.ml is absent (WebNN is not enabled in this browser)' };
  }
  return env;
}

async function init({ entry, ortBase, threads }) {
  ort = await import(entry);
  ort.env.wasm.wasmPaths = ortBase;
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
  ort.env.logLevel = 'error';
  return { version: ort.env.versions ? ort.env.versions.web || ort.env.versions.common : null };
}

async function load({ modelUrl, externalData, ep, inputs }) {
  const provider = ep === 'webnn' ? { name: 'webnn', deviceType: 'cpu' } : ep;
  // external data (weights beside the graph): [{path: name in the graph, data: URL}]
  session = await ort.InferenceSession.create(modelUrl, {
    executionProviders: [provider], graphOptimizationLevel: 'all', externalData,
  });
  feeds = {};
  const byName = Object.fromEntries(inputs.map((x) => [x.name, x]));
  const names = session.inputNames;
  names.forEach((name, i) => {
    const x = byName[name] || inputs[i];
    feeds[name] = new ort.Tensor(x.dtype, fromB64(x.b64, x.dtype), x.dims);
  });
  return { inputNames: names, outputNames: session.outputNames, threads: ort.env.wasm.numThreads,
    simd: ort.env.wasm.simd ?? null };
}

async function firstCall() {
  const t0 = performance.now();
  const out = await session.run(feeds);
  const seconds = (performance.now() - t0) / 1000;
  const first = out[session.outputNames[0]];
  const data = first.data instanceof Float32Array ? first.data : Float32Array.from(first.data, Number);
  return { seconds, dims: Array.from(first.dims), b64: toB64(data), type: first.type };
}

// One sample: k calls back to back, timed together; the mean seconds per call.
async function batch(k) {
  const t0 = performance.now();
  for (let i = 0; i < k; i++) await session.run(feeds);
  return (performance.now() - t0) / 1000 / k;
}

// n samples of k calls each (one round trip to Python per n samples).
async function samples(k, n) {
  const out = new Array(n);
  for (let j = 0; j < n; j++) out[j] = await batch(k);
  return out;
}

window.benchdb = { environment, init, load, firstCall, batch, samples, ready: true };
