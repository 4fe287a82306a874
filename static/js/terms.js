// Highlighted words: a small popover with the term's price, day change and a link to trade it,
// on hover, keyboard focus and tap; for a signed-in trader, buttons that buy (or sell) a few
// shares at the live quote in one confirm; and no keyboard focus for words hidden in a
// shortened abstract.
//
// Progressive enhancement: without this file every highlighted word is a plain link to its
// term's page, where the trade form works without script. Prices come from
// /market/tickers.json, asked for once, on the first word a reader points at; the trader's
// quotes from /market/<slug>/offer.json, asked for on every opening (they are the reader's own
// and live, so no page holds them). Everything is set with textContent, never as HTML. A file
// of its own because the Content-Security-Policy allows no inline script.
//
// Keyboard: a word's popover opens on focus; Tab from the word goes into the popover's buttons,
// Tab from its last control on to what follows the word, Escape closes it and returns to the
// word (which does not open it again). A trade or follow from the popover comes back to the
// page at the word's paper, the focus on the word (static/js/place.js).
(function () {
  "use strict";

  var pop = null;
  var current = null;
  var tickers = null;
  var loading = null;
  var hideTimer = null;
  var lastPointer = "mouse";
  var tapWasOpen = false;
  var offers = {};  // slug → the last offer.json answer, for the popover open now
  var asking = null;
  var refilling = false;  // true while fill() replaces what the popover shows
  var GAP = 6;  // px between the word and its popover

  function slugOf(link) {
    var match = /\/market\/([^/]+)\/$/.exec(link.getAttribute("href") || "");
    return match ? decodeURIComponent(match[1]) : null;
  }

  // The paper (or other element with an id) around a word: where a form posted from its
  // popover brings the reader back to, as the fragment of its ``next``.
  function placeOf(link) {
    var around = link.parentElement && link.parentElement.closest("[id]");
    return around && around !== document.body && around.id !== "main" ? around : null;
  }

  // ``next`` for a form posted from ``link``'s popover, and what static/js/place.js focuses
  // when the page comes back: the word itself, as the nth word with its address in its place.
  function keepPlace(form, link, next) {
    var place = placeOf(link);
    var selector = 'a.term[href="' + link.getAttribute("href").replace(/["\\]/g, "\\$&") + '"]';
    var scope = place || document.body;
    hidden(form, "next", next + (place ? "#" + place.id : ""));
    form.setAttribute("data-return-selector", selector);
    form.setAttribute(
      "data-return-index", String(Array.prototype.indexOf.call(scope.querySelectorAll(selector), link))
    );
  }

  // Focus that must not open the word's popover again (Escape, coming back after a trade).
  function focusQuietly(link) {
    link.setAttribute("data-focus-quietly", "");
    link.focus({ preventScroll: true });
    link.removeAttribute("data-focus-quietly");
  }

  function load() {
    if (!loading) {
      loading = fetch("/market/tickers.json", { credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.json() : { terms: {} }; })
        .then(function (data) { tickers = data.terms || {}; })
        .catch(function () { tickers = {}; });
    }
    return loading;
  }

  function build() {
    pop = document.createElement("div");
    pop.id = "term-popover";
    pop.className = "term-pop";
    // A dialog, not a tooltip: for a trader it holds buttons.
    pop.setAttribute("role", "dialog");
    pop.hidden = true;
    pop.addEventListener("mouseenter", function () { clearTimeout(hideTimer); });
    pop.addEventListener("mouseleave", scheduleHide);
    pop.addEventListener("focusout", function (event) {
      if (!refilling && !pop.contains(event.relatedTarget) && event.relatedTarget !== current) {
        hide();
      }
    });
    document.body.appendChild(pop);
  }

  function line(className, text) {
    var p = document.createElement("p");
    p.className = className;
    p.textContent = text;
    pop.appendChild(p);
    return p;
  }

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) {
      node.className = className;
    }
    if (text !== undefined) {
      node.textContent = text;
    }
    return node;
  }

  function hidden(form, name, value) {
    var input = element("input");
    input.type = "hidden";
    input.name = name;
    input.value = String(value);
    form.appendChild(input);
  }

  // One confirm: a form that posts exactly the quoted order, with the quoted total as its limit.
  function offerForm(data, offer, detail, link) {
    var form = element("form", "term-pop__offer");
    form.method = "post";
    form.action = data.trade_url;
    hidden(form, "csrfmiddlewaretoken", data.csrf);
    hidden(form, "side", offer.side);
    hidden(form, "shares", offer.shares);
    hidden(form, "limit", offer.limit);
    hidden(form, "key", offer.key);
    if (data.next) {
      keepPlace(form, link, data.next);
    }
    var button = element("button", "term-pop__button term-pop__button--" + offer.side);
    button.type = "submit";
    // The name is the visible text with the words a glance does without ("shares for",
    // "credits") read out too: an aria-label would hide what is shown (and voice control
    // users say what they see).
    button.appendChild(element("span", "term-pop__verb", offer.text.button));
    button.appendChild(element("span", "visually-hidden", offer.text.between));
    button.appendChild(element("span", "term-pop__total", offer.text.total));
    button.appendChild(element("span", "visually-hidden", " credits"));
    button.setAttribute("data-detail", offer.problem || offer.text.detail);
    if (offer.problem) {
      button.disabled = true;
    }
    function explain() {
      detail.textContent = button.getAttribute("data-detail");
    }
    button.addEventListener("mouseenter", explain);
    button.addEventListener("focus", explain);
    form.addEventListener("submit", function (event) {
      if (form.getAttribute("data-sent")) {
        event.preventDefault();  // the first click is on its way; a second is not a trade
        return;
      }
      form.setAttribute("data-sent", "1");
      detail.textContent = "Placing the order…";
    });
    form.appendChild(button);
    return form;
  }

  function tradeBox(data, link) {
    var box = element("div", "term-pop__trade");
    if (!data.signed_in) {
      var start = element("p", "term-pop__start", data.start.text + " ");
      var login = element("a", "", "Log in");
      login.href = data.start.login;
      var signup = element("a", "", "sign up");
      signup.href = data.start.signup;
      start.appendChild(login);
      start.appendChild(document.createTextNode(" or "));
      start.appendChild(signup);
      start.appendChild(document.createTextNode("."));
      box.appendChild(start);
      return box;
    }
    box.appendChild(element("p", "term-pop__held", data.held + " · " + data.cash));
    if (!data.offers.length) {
      return box;
    }
    var detail = element("p", "term-pop__detail");
    detail.setAttribute("aria-live", "polite");
    ["buy", "sell"].forEach(function (side) {
      var mine = data.offers.filter(function (offer) { return offer.side === side; });
      if (!mine.length) {
        return;
      }
      var row = element("div", "term-pop__offers");
      row.setAttribute("role", "group");
      row.setAttribute("aria-label", side === "buy" ? "Buy shares" : "Sell shares");
      mine.forEach(function (offer) {
        row.appendChild(offerForm(data, offer, detail, link));
      });
      box.appendChild(row);
    });
    // Until a button is pointed at, the quote of the middle-sized buy says what they mean.
    var shown = data.offers[Math.min(1, data.offers.length - 1)];
    detail.textContent = shown.problem || shown.text.detail;
    box.appendChild(detail);
    box.appendChild(element("p", "term-pop__fine", "Totals include the fee. One click trades."));
    return box;
  }

  function fill(link) {
    var slug = slugOf(link);
    var ticker = tickers && slug ? tickers[slug] : null;
    var data = slug ? offers[slug] : null;
    var phrase = data ? data.phrase : ticker ? ticker.phrase : link.textContent;
    pop.textContent = "";
    pop.setAttribute("aria-label", phrase);
    line("term-pop__phrase", phrase);
    if (data) {
      line("term-pop__price", data.price + " a share");
      if (data.change) {
        line("term-pop__change change change--" + data.trend, data.change);
      }
    } else if (ticker) {
      line("term-pop__price", ticker.price + " a share");
      line("term-pop__change change change--" + ticker.trend, ticker.change);
    } else if (tickers) {
      line("term-pop__price", "Not trading now");
    } else {
      line("term-pop__price", "Loading the price…");
    }
    if (data && data.tradable) {
      pop.appendChild(tradeBox(data, link));
    }
    var trade = document.createElement("a");
    trade.className = "term-pop__link";
    trade.href = link.getAttribute("href");
    trade.textContent = (data && data.signed_in ? "Chart and other amounts: “" : "Trade “") +
      phrase + "” →";
    pop.appendChild(trade);
    // Signed in (the page's own logout form carries a CSRF token): a button to follow the
    // term, posted as an ordinary form so the page comes back saying it is followed.
    var token = document.querySelector("input[name=csrfmiddlewaretoken]");
    if (token && slug && ticker) {
      var form = document.createElement("form");
      form.method = "post";
      form.action = "/market/" + encodeURIComponent(slug) + "/follow/";
      form.className = "term-pop__follow";
      hidden(form, "csrfmiddlewaretoken", token.value);
      keepPlace(form, link, window.location.pathname + window.location.search);
      var button = document.createElement("button");
      button.type = "submit";
      button.className = "link-button";
      button.textContent = "Follow “" + ticker.phrase + "”";
      form.appendChild(button);
      pop.appendChild(form);
    }
  }

  // The live quote, asked for on every opening: the last answer is never reused for another.
  function ask(link) {
    var slug = slugOf(link);
    if (!slug || !window.fetch) {
      return;
    }
    delete offers[slug];
    var url = "/market/" + encodeURIComponent(slug) + "/offer.json?next=" +
      encodeURIComponent(window.location.pathname + window.location.search);
    var mine = asking = fetch(url, { credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .catch(function () { return null; })
      .then(function (data) {
        if (mine !== asking || current !== link || pop.hidden || !data || !data.ok) {
          return;
        }
        offers[slug] = data;
        var at = focusables().indexOf(document.activeElement);
        // Emptying the popover takes the focus from the control in it, and the browser says so
        // with a focusout that must not close it: the focus goes back to the control in the
        // same place (a reader tabbing through is not sent back to the first one).
        refilling = true;
        fill(link);
        refilling = false;
        place(link);
        if (at >= 0) {
          var items = focusables();
          var same = items[Math.min(at, items.length - 1)];
          if (same) {
            same.focus({ preventScroll: true });
          }
        }
      });
  }

  function focusables() {
    return pop ? Array.prototype.slice.call(
      pop.querySelectorAll("a[href], button:not([disabled])")
    ) : [];
  }

  function focusFirst() {
    var items = focusables();
    if (items.length) {
      items[0].focus({ preventScroll: true });
    }
  }

  // Tab from the popover's last control: back on the word, quietly, and the Tab key's own
  // move (not prevented) goes on from there, so the browser's tab order decides what follows
  // (never a word hidden in a shortened abstract, never the top of the page).
  function leaveAfter(link) {
    hide();
    focusQuietly(link);
  }

  // Below the word, or above it when there is no room below and more above (a word near the
  // bottom of a phone's screen); never past the left or right edge.
  function place(link) {
    var rect = link.getBoundingClientRect();
    var viewport = document.documentElement;
    var width = Math.min(pop.offsetWidth || 240, viewport.clientWidth - 16);
    var left = Math.max(8, Math.min(rect.left, viewport.clientWidth - width - 8));
    var height = pop.offsetHeight;
    var below = viewport.clientHeight - rect.bottom - GAP;
    var above = rect.top - GAP;
    var top = rect.bottom + GAP;
    var flipped = height > below && above > below;
    if (flipped) {
      top = Math.max(GAP, rect.top - GAP - height);
    }
    pop.style.left = left + window.scrollX + "px";
    pop.style.top = top + window.scrollY + "px";
  }

  function show(link) {
    if (!pop) {
      build();
    }
    clearTimeout(hideTimer);
    if (current === link && !pop.hidden) {
      return;  // open already: refilling would take the focus from its buttons
    }
    if (current && current !== link) {
      current.removeAttribute("aria-describedby");
    }
    current = link;
    link.setAttribute("aria-describedby", pop.id);
    fill(link);
    pop.hidden = false;
    place(link);
    ask(link);
    if (!tickers) {
      load().then(function () {
        var slug = slugOf(link);
        var busy = pop.contains(document.activeElement);
        if (current === link && !pop.hidden && !(slug && offers[slug]) && !busy) {
          fill(link);
          place(link);
        }
      });
    }
  }

  function hide() {
    clearTimeout(hideTimer);
    if (pop) {
      pop.hidden = true;
    }
    if (current) {
      current.removeAttribute("aria-describedby");
      current = null;
    }
  }

  function scheduleHide() {
    clearTimeout(hideTimer);
    hideTimer = setTimeout(hide, 250);
  }

  function termLink(target) {
    return target && target.closest ? target.closest("a.term") : null;
  }

  // The link's own title would show a second, slower tooltip over the popover.
  function quietTitles(root) {
    root.querySelectorAll("a.term[title]").forEach(function (link) {
      link.removeAttribute("title");
    });
  }

  // Whether any part of ``link`` lies below the visible lines of ``box`` (a word that wraps
  // from the last line shown onto the first hidden one is hidden too: focusing it would
  // scroll the abstract all the same).
  function cut(link, box) {
    return Array.prototype.some.call(link.getClientRects(), function (part) {
      return part.bottom > box.bottom + 1;
    });
  }

  // A word in the hidden part of a shortened abstract must not take keyboard focus (focusing
  // it would scroll the abstract to the middle of a sentence, and keep it there).
  function hiddenWordsUnfocusable() {
    document.querySelectorAll(".paper__abstract").forEach(function (abstract) {
      var box = abstract.getBoundingClientRect();
      var clamped = abstract.scrollHeight > abstract.clientHeight + 1;
      abstract.querySelectorAll("a").forEach(function (link) {
        var hidden = clamped && cut(link, box);
        if (hidden) {
          link.setAttribute("tabindex", "-1");
        } else if (link.getAttribute("tabindex") === "-1") {
          link.removeAttribute("tabindex");
        }
      });
    });
  }

  document.addEventListener("pointerdown", function (event) {
    lastPointer = event.pointerType || "mouse";
    // Whether this word's popover was already open before this tap (focus, which a tap also
    // gives, opens it on the way).
    var link = termLink(event.target);
    tapWasOpen = Boolean(link && link === current && pop && !pop.hidden);
  }, true);

  document.addEventListener("mouseover", function (event) {
    var link = termLink(event.target);
    if (link && lastPointer === "mouse") {
      show(link);
    }
  });
  document.addEventListener("mouseout", function (event) {
    var link = termLink(event.target);
    if (link && link === current && !link.contains(event.relatedTarget)) {
      scheduleHide();
    }
  });
  document.addEventListener("focusin", function (event) {
    var link = termLink(event.target);
    if (link && !link.hasAttribute("data-focus-quietly")) {
      show(link);
    }
  });
  document.addEventListener("focusout", function (event) {
    var link = termLink(event.target);
    if (link && link === current && !(pop && pop.contains(event.relatedTarget))) {
      scheduleHide();
    }
  });
  // A tap on a phone opens the popover instead of leaving the listing; tapping the same word
  // again (or the popover's link) goes to the term.
  document.addEventListener("click", function (event) {
    var link = termLink(event.target);
    if (link && lastPointer !== "mouse" && !tapWasOpen) {
      event.preventDefault();
      show(link);
    } else if (!link && pop && !pop.hidden && !pop.contains(event.target)) {
      hide();
    }
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Tab" && !event.altKey && !event.ctrlKey && !event.metaKey && pop &&
        !pop.hidden && current) {
      var items = focusables();
      var inside = pop.contains(document.activeElement);
      if (document.activeElement === current && !event.shiftKey && items.length) {
        event.preventDefault();
        focusFirst();
      } else if (inside && event.shiftKey && document.activeElement === items[0]) {
        event.preventDefault();
        current.focus({ preventScroll: true });
      } else if (inside && !event.shiftKey && document.activeElement === items[items.length - 1]) {
        leaveAfter(current);
      }
      return;
    }
    if (event.key === "Escape" && pop && !pop.hidden) {
      var link = current;
      hide();
      if (link) {
        focusQuietly(link);  // one press: refocusing must not open it again
      }
    }
  });
  document.addEventListener("toggle", hiddenWordsUnfocusable, true);
  window.addEventListener("resize", hiddenWordsUnfocusable);

  function start() {
    quietTitles(document);
    hiddenWordsUnfocusable();
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
