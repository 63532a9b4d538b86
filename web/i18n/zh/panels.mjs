// panels.mjs: the Chinese strings of the page's panels (docs/i18n.md, "The catalogues").
export default {
};
