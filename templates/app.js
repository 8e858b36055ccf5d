// forkful: tick off ingredients and steps while cooking.
// Progressive enhancement only; does nothing on pages without a recipe.
(function () {
  "use strict";
  var SEL = ".recipe .ingredients li, .recipe .steps > li";
  var items = Array.prototype.slice.call(document.querySelectorAll(SEL));
  if (!items.length) return;
  var key = location.pathname;

  // sessionStorage may be missing or throw (privacy modes, sandboxing).
  function load() {
    try {
      var v = JSON.parse(window.sessionStorage.getItem(key));
      return Array.isArray(v) ? v : [];
    } catch (e) {
      return [];
    }
  }
  function save() {
    var done = [];
    items.forEach(function (li, i) {
      if (li.classList.contains("done")) done.push(i);
    });
    try {
      if (done.length) window.sessionStorage.setItem(key, JSON.stringify(done));
      else window.sessionStorage.removeItem(key);
    } catch (e) { /* not remembered; still works */ }
  }
  function toggle(li) {
    li.classList.toggle("done");
    save();
  }

  var saved = load();
  items.forEach(function (li, i) {
    li.tabIndex = 0;
    if (saved.indexOf(i) >= 0) li.classList.add("done");
  });

  document.addEventListener("click", function (e) {
    var t = e.target;
    if (!t || !t.closest || t.closest("a, button, input, label, summary")) return;
    // Selecting text to copy should not tick the item.
    var sel = window.getSelection && window.getSelection();
    if (sel && !sel.isCollapsed) return;
    var li = t.closest(".ingredients li, .steps > li");
    if (li && items.indexOf(li) >= 0) toggle(li);
  });

  document.addEventListener("keydown", function (e) {
    if (e.altKey || e.ctrlKey || e.metaKey || e.repeat) return;
    if ((e.key === "Enter" || e.key === " ") && items.indexOf(e.target) >= 0) {
      e.preventDefault(); // Space would otherwise scroll
      toggle(e.target);
    }
  });
})();

// forkful: the recipe form's live preview. As the cook types, the form's
// fields go to /preview (debounced) and the recipe comes back rendered as
// its page will render it. The form works the same without this.
(function () {
  "use strict";
  var form = document.querySelector("form.recipe-form");
  var out = document.querySelector("section.preview");
  if (!form || !out || !window.fetch || !window.FormData || !window.URLSearchParams) return;
  var timer = null;
  var latest = 0;
  function preview() {
    var mine = ++latest;
    fetch("/preview", {
      method: "POST",
      body: new URLSearchParams(new FormData(form)),
      credentials: "same-origin",
      headers: { "Accept": "text/html" }
    })
      .then(function (r) { return r.text(); })
      .then(function (html) {
        // An older answer that arrives late must not replace a newer one.
        if (mine === latest) out.innerHTML = html;
      })
      .catch(function () { /* no preview; the form still saves */ });
  }
  form.addEventListener("input", function () {
    window.clearTimeout(timer);
    timer = window.setTimeout(preview, 300);
  });
  preview();
})();

// forkful: a merge form's live preview (bringing in a parent's changes,
// accepting a suggestion). As the cook chooses how to settle each change,
// the form goes to the page's /preview and the whole merged recipe comes
// back rendered; its Preview button does the same without scripts.
(function () {
  "use strict";
  var out = document.querySelector("section.preview[data-preview-url]");
  if (!out || !window.fetch || !window.FormData || !window.URLSearchParams) return;
  var form = document.getElementById(out.getAttribute("data-preview-for"));
  if (!form) return;
  var url = out.getAttribute("data-preview-url");
  var timer = null;
  var latest = 0;
  function preview() {
    var mine = ++latest;
    fetch(url, {
      method: "POST",
      body: new URLSearchParams(new FormData(form)),
      credentials: "same-origin",
      headers: { "Accept": "text/html" }
    })
      .then(function (r) { return r.text(); })
      .then(function (html) {
        // An older answer that arrives late must not replace a newer one.
        if (mine === latest) out.innerHTML = html;
      })
      .catch(function () { /* no preview; the form still saves */ });
  }
  function soon() {
    window.clearTimeout(timer);
    timer = window.setTimeout(preview, 300);
  }
  form.addEventListener("input", soon);
  form.addEventListener("change", soon);
  // Writing by hand chooses to write by hand.
  form.addEventListener("input", function (e) {
    var box = e.target;
    if (!box || box.tagName !== "TEXTAREA" || !box.name || box.name.indexOf("edit-") !== 0) return;
    var radio = form.querySelector('input[type=radio][name="choice-' + box.name.slice(5) + '"][value=edit]');
    if (radio && !radio.checked) radio.checked = true;
  });
  preview();
})();
