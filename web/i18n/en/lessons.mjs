// lessons.mjs: the English strings of the page's lessons (docs/i18n.md, "The catalogues").
export default {
};
