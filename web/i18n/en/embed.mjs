// embed.mjs: the English strings of the page's embed (docs/i18n.md, "The catalogues").
export default {
};
