// explain.mjs: the English strings of the page's explain (docs/i18n.md, "The catalogues").
export default {
};
