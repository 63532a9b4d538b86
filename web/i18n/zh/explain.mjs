// explain.mjs: the Chinese strings of the page's explain (docs/i18n.md, "The catalogues").
export default {
};
