// embed.mjs: the English strings of the page's embed (docs/i18n.md, "The catalogues"): the <attn-viz>
// element's own words (web/embed.mjs); its controls, readouts and captions are the page's keys.
export default {
  'embed.loading': 'loading…',
  'embed.computing': 'computing…',
  'embed.moduleFailed': 'attn-viz: the WebAssembly module did not load: {message}',
  'embed.workerFailed': 'the worker failed: {message}',
  'embed.messageUnreadable': 'a message from the worker could not be read',
  // the host page's Content-Security-Policy blocked the element's loading (web/embed-csp.mjs)
  'embed.csp.connect': "attn-viz: the page's Content-Security-Policy blocks connect-src to {origin}, where the element's WebAssembly is: add {origin} to connect-src (docs/embedding.md)",
  'embed.csp.wasm': "attn-viz: the page's Content-Security-Policy blocks compiling WebAssembly: add 'wasm-unsafe-eval' to script-src (docs/embedding.md)",
  'embed.csp.worker': "attn-viz: the page's Content-Security-Policy blocks the element's worker (a blob: URL): add blob: to worker-src (docs/embedding.md)",
  'embed.csp.trustedTypes': "attn-viz: the page's Content-Security-Policy allows no Trusted Types policy named attnviz, which the element's worker needs: add attnviz to trusted-types (docs/embedding.md)",
  'embed.computeFailed': 'computation failed: {message}',
  'embed.noMatrix': 'no matrix',
  'embed.badView': 'view "{view}" is not one of {views} here: showing the heatmap',
  'embed.host': 'host: the <attn-viz> element answers no messages (host= is for the iframe embed)',
  'embed.join': '; ',
  'embed.caption.M': 'variant matrix M',
  'embed.caption.variant': '{variant}: M',
  'embed.caption.A': 'softmax A',
  'embed.caption.D': 'M − A',
  'embed.aria.heatmaps': 'attention matrices',
  'embed.aria.M': "heatmap of the variant's attention matrix",
  'embed.aria.A': 'heatmap of the softmax attention matrix',
  'embed.aria.D': 'heatmap of the difference between the variant and softmax',
  'embed.aria.spectra': 'spectrum',
  'embed.aria.readouts': 'readouts',
};
