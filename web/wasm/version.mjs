// version.mjs: the package's version (package.json's), in the loader's exports and window.attnviz.version,
// so that a figure can say which release drew it. tests/js/package-types.test.mjs keeps the two equal.
export const VERSION = '0.2.0';
