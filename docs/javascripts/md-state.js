// Page-state helpers the theme's bundle expects as globals: where the site's root is, and a
// small per-site store in localStorage (colour scheme, search state). Loaded from a file with
// the site root in data-scope, so that no page needs an inline script.
(function () {
  "use strict";
  var me = document.currentScript;
  var scope = new URL((me && me.getAttribute("data-scope")) || ".", location);
  function key(name, base) { return base.pathname + "." + name; }
  window.__md_scope = scope;
  window.__md_hash = function (text) {
    var h = 0;
    for (var ch of text) h = (h << 5) - h + ch.charCodeAt(0);
    return h;
  };
  window.__md_get = function (name, store, base) {
    store = store || localStorage;
    return JSON.parse(store.getItem(key(name, base || scope)));
  };
  window.__md_set = function (name, value, store, base) {
    store = store || localStorage;
    try { store.setItem(key(name, base || scope), JSON.stringify(value)); } catch (err) { /* storage full or off */ }
  };
})();
