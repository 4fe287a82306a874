// Highlighted words: a small popover with the term's price, day change and a link to trade it,
// on hover, keyboard focus and tap; and no keyboard focus for words hidden in a shortened
// abstract.
//
// Progressive enhancement: without this file every highlighted word is a plain link to its
// term's page. Prices come from /market/tickers.json, asked for once, on the first word a
// reader points at, and are set with textContent, never as HTML. A file of its own because the
// Content-Security-Policy allows no inline script.
(function () {
  "use strict";

  var pop = null;
  var current = null;
  var tickers = null;
  var loading = null;
  var hideTimer = null;
  var lastPointer = "mouse";
  var tapWasOpen = false;

  function slugOf(link) {
    var match = /\/market\/([^/]+)\/$/.exec(link.getAttribute("href") || "");
    return match ? decodeURIComponent(match[1]) : null;
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
    pop.setAttribute("role", "tooltip");
    pop.hidden = true;
    pop.addEventListener("mouseenter", function () { clearTimeout(hideTimer); });
    pop.addEventListener("mouseleave", scheduleHide);
    pop.addEventListener("focusout", function (event) {
      if (!pop.contains(event.relatedTarget) && event.relatedTarget !== current) {
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

  function fill(link) {
    var slug = slugOf(link);
    var ticker = tickers && slug ? tickers[slug] : null;
    pop.textContent = "";
    line("term-pop__phrase", ticker ? ticker.phrase : link.textContent);
    if (ticker) {
      line("term-pop__price", ticker.price + " a share");
      line("term-pop__change change change--" + ticker.trend, ticker.change);
    } else if (tickers) {
      line("term-pop__price", "Not trading now");
    } else {
      line("term-pop__price", "Loading the price…");
    }
    var trade = document.createElement("a");
    trade.className = "term-pop__link";
    trade.href = link.getAttribute("href");
    trade.textContent = "Trade “" + (ticker ? ticker.phrase : link.textContent) + "” →";
    pop.appendChild(trade);
    // Signed in (the page's own logout form carries a CSRF token): a button to follow the
    // term, posted as an ordinary form so the page comes back saying it is followed.
    var token = document.querySelector("input[name=csrfmiddlewaretoken]");
    if (token && slug && ticker) {
      var form = document.createElement("form");
      form.method = "post";
      form.action = "/market/" + encodeURIComponent(slug) + "/follow/";
      form.className = "term-pop__follow";
      [["csrfmiddlewaretoken", token.value], ["next", window.location.pathname]].forEach(
        function (pair) {
          var input = document.createElement("input");
          input.type = "hidden";
          input.name = pair[0];
          input.value = pair[1];
          form.appendChild(input);
        }
      );
      var button = document.createElement("button");
      button.type = "submit";
      button.className = "link-button";
      button.textContent = "Follow “" + ticker.phrase + "”";
      form.appendChild(button);
      pop.appendChild(form);
    }
  }

  function place(link) {
    var rect = link.getBoundingClientRect();
    var width = Math.min(pop.offsetWidth || 240, document.documentElement.clientWidth - 16);
    var left = Math.max(8, Math.min(rect.left, document.documentElement.clientWidth - width - 8));
    pop.style.left = left + window.scrollX + "px";
    pop.style.top = rect.bottom + window.scrollY + 6 + "px";
  }

  function show(link) {
    if (!pop) {
      build();
    }
    clearTimeout(hideTimer);
    if (current && current !== link) {
      current.removeAttribute("aria-describedby");
    }
    current = link;
    link.setAttribute("aria-describedby", pop.id);
    fill(link);
    pop.hidden = false;
    place(link);
    if (!tickers) {
      load().then(function () {
        if (current === link && !pop.hidden) {
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

  // A word in the hidden part of a shortened abstract must not take keyboard focus (focusing
  // it would scroll the abstract to the middle of a sentence, and keep it there).
  function hiddenWordsUnfocusable() {
    document.querySelectorAll(".paper__abstract").forEach(function (abstract) {
      var box = abstract.getBoundingClientRect();
      var clamped = abstract.scrollHeight > abstract.clientHeight + 1;
      abstract.querySelectorAll("a").forEach(function (link) {
        var hidden = clamped && link.getBoundingClientRect().top >= box.bottom - 1;
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
    if (link) {
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
    if (event.key === "Escape" && pop && !pop.hidden) {
      var link = current;
      hide();
      if (link) {
        link.focus({ preventScroll: true });
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
