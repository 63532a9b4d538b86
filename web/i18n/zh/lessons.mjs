// lessons.mjs: the Chinese strings of the page's lessons (docs/i18n.md, "The catalogues").
export default {
};
