// The reader's place after a form that comes back to the same page (a star, a tag change, a
// follow, an order cancel, a popover's buy): focus returns to the control that was used.
//
// Without this file the place is kept by the address alone: such a form's ``next`` ends with
// a ``#fragment`` naming the paper (or order, or form) it acted on, the view redirects there,
// and the browser scrolls to it. This script adds the focus, which an address cannot carry: on
// submit it notes which control was used, relative to the element the fragment names, in
// sessionStorage; on the page the form sends the reader back to, it focuses that control again
// without scrolling (the fragment has placed the page already), and only nudges the page when
// the control would otherwise be out of sight.
//
// What the page says about the act ("Bought 1 share…", "Tags saved: …") is at the top of the
// page, out of sight of a reader brought back deep in it: it moves to the end of the place,
// next to the control that has the focus.
//
// A form may name what to focus instead of itself: ``data-return-selector`` (a CSS selector,
// looked up inside the fragment's element) and ``data-return-index`` (which match). The
// popover's forms do (static/js/terms.js): they leave with the popover, the word stays.
(function () {
  "use strict";

  var KEY = "peer-revenue:place";
  var FRESH_MS = 120000;  // a note older than this is from another visit: ignored

  function storage() {
    try {
      return window.sessionStorage;
    } catch (error) {
      return null;  // storage switched off: the fragment alone keeps the place
    }
  }

  function placeOf(next) {
    var hash = next.indexOf("#");
    return hash < 0 ? "" : decodeURIComponent(next.slice(hash + 1));
  }

  function within(id) {
    return (id && document.getElementById(id)) || document.body;
  }

  // What ``selector`` finds in ``place``, the place itself included (a form may be the place).
  function findAll(place, selector) {
    return place.matches(selector) ? [place] : Array.prototype.slice.call(
      place.querySelectorAll(selector)
    );
  }

  // How to find ``form`` again in ``place`` after the page is made anew: by its action, and
  // which of the forms with that action it is.
  function formNote(form, control, place) {
    var selector = 'form[action="' + CSS.escape(form.getAttribute("action") || "") + '"]';
    var note = {
      selector: selector,
      index: findAll(place, selector).indexOf(form),
      // The field typed in (Enter in a tag box) is refocused; after a button, whatever button
      // the form has now (Follow becomes Unfollow).
      field: control && control.tagName !== "BUTTON" && control.name ? control.name : "",
    };
    return note;
  }

  function remember(event) {
    var form = event.target;
    var next = form.querySelector && form.querySelector('input[name="next"]');
    var store = storage();
    if (event.defaultPrevented || !next || !next.value || !store || !window.CSS) {
      return;
    }
    var id = placeOf(next.value);
    var place = within(id);
    var note;
    var selector = form.getAttribute("data-return-selector");
    if (selector) {
      note = {
        selector: selector,
        index: Number(form.getAttribute("data-return-index") || 0),
        field: "",
      };
    } else {
      var active = document.activeElement;
      var control = form.contains(active) ? active : event.submitter;
      note = formNote(form, control, place);
    }
    note.to = next.value;
    note.place = id;
    note.at = Date.now();
    try {
      store.setItem(KEY, JSON.stringify(note));
    } catch (error) {
      // A full or refused store: the fragment alone keeps the place.
    }
  }

  function focusable(form, field) {
    if (field) {
      var named = form.querySelector('[name="' + CSS.escape(field) + '"]:not([type=hidden])');
      if (named) {
        return named;
      }
    }
    return form.querySelector("button:not([disabled]), input[type=submit]:not([disabled])");
  }

  function inView(element) {
    var box = element.getBoundingClientRect();
    return box.top >= 0 && box.bottom <= window.innerHeight;
  }

  // The page's messages, out of sight at its top, brought to the end of ``place`` with the
  // live region around them (base.html), so a screen reader still hears them.
  function bringMessages(place) {
    var list = document.querySelector("main > .messages-region");
    if (!list || place === document.body || inView(list)) {
      return;
    }
    list.classList.add("messages--here");
    place.appendChild(list);
    if (!inView(list)) {
      list.scrollIntoView({ block: "nearest" });
    }
  }

  function restore() {
    var store = storage();
    var raw = store && store.getItem(KEY);
    if (!raw) {
      return;
    }
    store.removeItem(KEY);
    var note;
    try {
      note = JSON.parse(raw);
    } catch (error) {
      return;
    }
    // Only where the form said it would come back to (a refusal page or a login is not it).
    if (!note || typeof note.to !== "string" || !(Date.now() - note.at < FRESH_MS) ||
        new URL(note.to, window.location.href).href !== window.location.href) {
      return;
    }
    var active = document.activeElement;
    if (active && active !== document.body && active !== document.documentElement) {
      return;  // the reader has moved on already (a Tab before the page finished loading)
    }
    var place = within(note.place);
    var found = findAll(place, note.selector);
    var target = found[note.index] || found[0] || null;
    if (target && target.tagName === "FORM") {
      target = focusable(target, note.field);
    }
    if (!target && place !== document.body) {
      // The control is gone (a cancelled order has no Cancel button): its row takes focus.
      target = place;
      if (!place.hasAttribute("tabindex")) {
        place.setAttribute("tabindex", "-1");
      }
    }
    if (!target) {
      return;
    }
    // A word in a shortened abstract: the reader had opened it to use the word.
    var more = target.closest(".paper") && target.closest(".paper").querySelector(".paper__more");
    if (more && !more.open && target.closest(".paper__abstract--clamped") &&
        target.getAttribute("tabindex") === "-1") {
      more.open = true;
    }
    // A control in a closed box (the limit-order box closes when no order waits after the
    // one placed filled at once): the reader had it open to use it.
    var box = target.closest("details:not([open])");
    if (box && !target.matches("summary")) {
      box.open = true;
    }
    // Focus alone: a word's popover opens for a reader who moves to the word, not for one
    // coming back from a trade (static/js/terms.js reads this mark).
    target.setAttribute("data-focus-quietly", "");
    target.focus({ preventScroll: true });
    target.removeAttribute("data-focus-quietly");
    if (!inView(target)) {
      target.scrollIntoView({ block: "nearest" });
    }
    bringMessages(place);
  }

  document.addEventListener("submit", remember);
  // After load: going to a fragment focuses its element, or the page itself when the element
  // (a paper's entry) takes no focus, and the browser does so as late as load. Focusing first
  // would be undone.
  if (document.readyState === "complete") {
    window.setTimeout(restore, 0);
  } else {
    window.addEventListener("load", function () { window.setTimeout(restore, 0); });
  }
})();
