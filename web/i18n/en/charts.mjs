// charts.mjs: the English strings of the page's charts (docs/i18n.md, "The catalogues").
export default {
};
