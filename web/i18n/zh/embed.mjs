// embed.mjs: the Chinese strings of the page's embed (docs/i18n.md, "The catalogues"): the <attn-viz>
// element's own words (web/embed.mjs); its controls, readouts and captions are the page's keys.
export default {
  'embed.loading': '加载中…',
  'embed.computing': '计算中…',
  'embed.moduleFailed': 'attn-viz：WebAssembly 模块未能加载：{message}',
  'embed.workerFailed': '后台线程出错：{message}',
  'embed.messageUnreadable': '无法读取后台线程发来的消息',
  // the host page's Content-Security-Policy blocked the element's loading (web/embed-csp.mjs)
  'embed.csp.connect': "attn-viz：页面的内容安全策略（Content-Security-Policy）在 connect-src 中不允许 {origin}，而元素的 WebAssembly 在那里：请把 {origin} 加入 connect-src（见 docs/embedding.md）",
  'embed.csp.wasm': "attn-viz：页面的内容安全策略（Content-Security-Policy）禁止编译 WebAssembly：请在 script-src 中加入 'wasm-unsafe-eval'（见 docs/embedding.md）",
  'embed.csp.worker': "attn-viz：页面的内容安全策略（Content-Security-Policy）阻止了元素的后台线程（blob: URL）：请在 worker-src 中加入 blob:（见 docs/embedding.md）",
  'embed.csp.trustedTypes': "attn-viz：页面的内容安全策略（Content-Security-Policy）不允许名为 attnviz 的 Trusted Types 策略，而元素的后台线程需要它：请在 trusted-types 中加入 attnviz（见 docs/embedding.md）",
  'embed.computeFailed': '计算失败：{message}',
  'embed.noMatrix': '没有矩阵',
  'embed.badView': 'view “{view}” 不是这里可用的视图（{views}）：改为显示热力图',
  'embed.host': 'host：<attn-viz> 元素不接收消息（host= 只用于 iframe 嵌入）',
  'embed.join': '；',
  'embed.caption.M': '变体矩阵 M',
  'embed.caption.variant': '{variant}：M',
  'embed.caption.A': 'softmax 注意力 A',
  'embed.caption.D': '差值 M − A',
  'embed.aria.heatmaps': '注意力矩阵',
  'embed.aria.M': '变体注意力矩阵的热力图',
  'embed.aria.A': 'softmax 注意力矩阵的热力图',
  'embed.aria.D': '变体与 softmax 之差的热力图',
  'embed.aria.spectra': '奇异值谱',
  'embed.aria.readouts': '读数',
};
