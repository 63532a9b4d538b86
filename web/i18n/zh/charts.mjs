// charts.mjs: the Chinese strings of the page's charts (docs/i18n.md, "The catalogues").
export default {
};
