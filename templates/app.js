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

// forkful: live previews. As the cook types (or chooses), a form's fields
// go to its preview address (debounced) and the recipe comes back rendered
// as its page will render it: the recipe form's at /preview, a merge
// form's (bringing in a parent's changes, accepting a suggestion) at the
// address its preview box names, where its Preview button does the same
// without scripts. The forms work the same without this.
(function () {
  "use strict";
  if (!window.fetch || !window.FormData || !window.URLSearchParams) return;
  function live(form, out, url) {
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
    preview();
  }

  var recipe = document.querySelector("form.recipe-form");
  var recipeOut = document.querySelector("section.preview:not([data-preview-url])");
  if (recipe && recipeOut) live(recipe, recipeOut, "/preview");

  var mergeOut = document.querySelector("section.preview[data-preview-url]");
  var merge = mergeOut && document.getElementById(mergeOut.getAttribute("data-preview-for"));
  if (merge) {
    live(merge, mergeOut, mergeOut.getAttribute("data-preview-url"));
    // Writing by hand chooses to write by hand.
    merge.addEventListener("input", function (e) {
      var box = e.target;
      if (!box || box.tagName !== "TEXTAREA" || !box.name || box.name.indexOf("edit-") !== 0) return;
      var radio = merge.querySelector('input[type=radio][name="choice-' + box.name.slice(5) + '"][value=edit]');
      if (radio && !radio.checked) radio.checked = true;
    });
  }
})();
