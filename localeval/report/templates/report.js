/* localeval report: sample filter, expand/collapse, open a sample from the URL hash.
   Reads text with textContent and writes only textContent / properties: dataset text
   is never parsed as HTML or code here (no HTML-string sinks, no dynamic code). */
(function () {
  "use strict";
  var samples = Array.prototype.slice.call(document.querySelectorAll("details.sample"));
  var index = samples.map(function (el) {
    return { el: el, text: el.textContent.toLowerCase(), unscored: el.hasAttribute("data-unscored") };
  });
  var controls = document.getElementById("controls");
  var box = document.getElementById("filter-text");
  var onlyUnscored = document.getElementById("filter-unscored");
  var count = document.getElementById("filter-count");

  function apply() {
    var terms = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    index.forEach(function (it) {
      var ok = (!onlyUnscored.checked || it.unscored) && terms.every(function (t) {
        return it.text.indexOf(t) !== -1;
      });
      it.el.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = shown + " of " + index.length + " shown";
  }

  function setAll(open) {
    index.forEach(function (it) { if (!it.el.hidden) { it.el.open = open; } });
  }

  function openFromHash() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var el = id ? document.getElementById(id) : null;
    if (el && el.tagName === "DETAILS") {
      el.hidden = false;
      el.open = true;
      el.scrollIntoView({ block: "start" });
    }
  }

  if (controls && box && onlyUnscored && count) {
    box.addEventListener("input", apply);
    onlyUnscored.addEventListener("change", apply);
    document.getElementById("expand-all").addEventListener("click", function () { setAll(true); });
    document.getElementById("collapse-all").addEventListener("click", function () { setAll(false); });
    controls.hidden = false;
    apply();
  }
  window.addEventListener("hashchange", openFromHash);
  openFromHash();
  // Tells tests (and curious readers) that the script ran to the end.
  document.documentElement.setAttribute("data-report-ready", String(index.length));
})();
