// The paper page's Cite control: a button that copies the BibTeX entry.
//
// Without this file the entry is selectable text and a .bib download (templates/papers/
// _paper.html); the button is made here because it does nothing without a script. It says
// what happened in a status line a screen reader reads out. Where the clipboard is refused
// (an insecure origin, a denied permission) the entry is selected instead, for the reader's
// own copy.
(function () {
  "use strict";

  function selectText(element) {
    var range = document.createRange();
    range.selectNodeContents(element);
    var selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  function enhance(cite) {
    var text = cite.querySelector(".cite__bibtex");
    var actions = cite.querySelector(".cite__actions");
    if (!text || !actions) {
      return;
    }
    var button = document.createElement("button");
    button.type = "button";
    button.className = "button cite__copy";
    button.textContent = "Copy BibTeX";
    var status = document.createElement("span");
    status.className = "cite__status";
    status.setAttribute("role", "status");
    actions.insertBefore(status, actions.firstChild);
    actions.insertBefore(button, status);

    function selected() {
      selectText(text);
      status.textContent = "Selected: press Ctrl+C (⌘C on a Mac) to copy.";
    }

    button.addEventListener("click", function () {
      status.textContent = "";
      if (!navigator.clipboard || !window.isSecureContext) {
        selected();
        return;
      }
      navigator.clipboard.writeText(text.textContent).then(function () {
        status.textContent = "Copied to the clipboard.";
      }, selected);
    });
  }

  Array.prototype.forEach.call(document.querySelectorAll(".cite"), enhance);
})();
