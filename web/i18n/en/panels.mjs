// panels.mjs: the English strings of the page's panels (docs/i18n.md, "The catalogues").
export default {
};
