// Live quotes on a term's page, and confirm buttons that submit once.
//
// Progressive enhancement only: without this file the quote form still works (it asks the
// server for a quote page). Everything shown is text from the server's JSON quote, set with
// textContent, never HTML. Loaded as a file because the Content-Security-Policy forbids
// inline script.
(function () {
  "use strict";

  var DELAY_MS = 300;

  function line(parent, label, value) {
    var row = document.createElement("div");
    var dt = document.createElement("dt");
    var dd = document.createElement("dd");
    dt.textContent = label;
    dd.textContent = value;
    row.appendChild(dt);
    row.appendChild(dd);
    parent.appendChild(row);
  }

  function show(output, data) {
    output.textContent = "";
    if (!data) {
      return;
    }
    if (!data.ok) {
      var error = document.createElement("p");
      error.className = "field-error";
      error.textContent = data.error;
      output.appendChild(error);
      return;
    }
    var summary = document.createElement("p");
    summary.className = "live-quote__summary";
    summary.textContent = data.text.summary;
    output.appendChild(summary);
    var figures = document.createElement("dl");
    figures.className = "figures figures--compact";
    line(figures, "Fee", data.text.fee);
    line(figures, "Average price", data.text.average_price);
    line(figures, "Price after", data.text.price_after);
    output.appendChild(figures);
    [data.note, data.problem].forEach(function (text) {
      if (text) {
        var p = document.createElement("p");
        p.className = text === data.problem ? "field-error" : "help-text";
        p.textContent = text;
        output.appendChild(p);
      }
    });
  }

  function liveQuotes(form) {
    var output = form.querySelector("[data-live-quote]");
    var url = form.getAttribute("data-quote-url");
    if (!output || !url || !window.fetch) {
      return;
    }
    var timer = null;
    var inFlight = null;

    function request() {
      var params = new URLSearchParams();
      var side = form.querySelector('input[name="side"]:checked');
      var shares = form.querySelector('input[name="shares"]');
      var budget = form.querySelector('input[name="budget"]');
      params.set("side", side ? side.value : "buy");
      if (shares && shares.value.trim()) {
        params.set("shares", shares.value.trim());
      }
      if (budget && budget.value.trim()) {
        params.set("budget", budget.value.trim());
      }
      if (!params.has("shares") && !params.has("budget")) {
        show(output, null);
        return;
      }
      if (inFlight) {
        inFlight.abort();
      }
      inFlight = window.AbortController ? new AbortController() : null;
      fetch(url + "?" + params.toString(), {
        credentials: "same-origin",
        headers: { Accept: "application/json" },
        signal: inFlight ? inFlight.signal : undefined,
      })
        .then(function (response) {
          return response.json();
        })
        .then(function (data) {
          show(output, data);
        })
        .catch(function (error) {
          if (error && error.name === "AbortError") {
            return;
          }
          show(output, { ok: false, error: "No live quote right now; press “Get a quote”." });
        });
    }

    function schedule() {
      window.clearTimeout(timer);
      timer = window.setTimeout(request, DELAY_MS);
    }

    form.addEventListener("input", schedule);
    form.addEventListener("change", schedule);
  }

  function submitOnce(form) {
    form.addEventListener("submit", function (event) {
      if (form.getAttribute("data-submitted") === "yes") {
        // The key already makes a repeat harmless; this just spares the round trip.
        event.preventDefault();
        return;
      }
      form.setAttribute("data-submitted", "yes");
      var button = form.querySelector('button[type="submit"]');
      if (button) {
        button.setAttribute("aria-disabled", "true");
        button.classList.add("is-busy");
      }
    });
  }

  // Coming back to a page from the history cache: allow confirming again (the same key makes
  // a repeat return the first trade, so this can never trade twice).
  window.addEventListener("pageshow", function (event) {
    if (!event.persisted) {
      return;
    }
    document.querySelectorAll("form[data-submitted]").forEach(function (form) {
      form.removeAttribute("data-submitted");
      var button = form.querySelector('button[type="submit"]');
      if (button) {
        button.removeAttribute("aria-disabled");
        button.classList.remove("is-busy");
      }
    });
  });

  function start() {
    document.querySelectorAll("form[data-quote-url]").forEach(liveQuotes);
    document.querySelectorAll("form[data-submit-once]").forEach(submitOnce);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
